package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/template"
)

func newTemplateCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "template", Short: "List and build templates (root filesystems)"}
	ls := listVerb(e, &cobra.Command{Use: "ls", Short: "List the server's templates", Args: cobra.NoArgs},
		[]string{"NAME", "READY", "SIZE", "DESCRIPTION"},
		func(ctx context.Context, _ []string) ([]client.Template, error) { return e.client().Templates(ctx) },
		func(t client.Template) []string {
			size := ""
			if t.SizeBytes > 0 {
				size = fmt.Sprintf("%.0fM", float64(t.SizeBytes)/(1<<20))
			}
			return []string{t.Name, fmt.Sprint(t.Ready), size, t.Description}
		})

	var o template.DebianOptions
	var data string
	build := &cobra.Command{
		Use:   "build debian",
		Short: "Build a Debian template with mmdebstrap (on this host, into --data)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "debian" {
				return fmt.Errorf("only \"debian\" templates can be built (got %q)", args[0])
			}
			if os.Geteuid() != 0 {
				return fmt.Errorf("building a template needs root")
			}
			reg, err := template.Open(data, nil)
			if err != nil {
				return err
			}
			if err := reg.BuildDebian(cmd.Context(), o, e.stdout); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "template %q is ready\n", orDefault(o.Name, "debian"))
			return nil
		},
	}
	fs := build.Flags()
	fs.StringVar(&data, "data", defaultDataDir, "the server's data directory")
	fs.StringVar(&o.Name, "name", "", "template name (default debian)")
	fs.StringVar(&o.Suite, "suite", "", "Debian suite (default bookworm)")
	fs.StringVar(&o.Mirror, "mirror", "", "Debian mirror URL (default: the host's)")
	fs.StringSliceVar(&o.Include, "include", nil, "extra packages (comma-separated)")
	cmd.AddCommand(ls, build)
	return cmd
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
