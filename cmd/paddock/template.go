package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/template"
)

// paddock template: list, inspect and remove templates; pull, import,
// export, push and build them (template_*.go, one file per verb).
func newTemplateCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "template", Short: "List, pull, build and manage templates (root filesystems)"}
	ls := listVerb(e, &cobra.Command{Use: "ls", Short: "List the templates you can use", Args: cobra.NoArgs},
		[]string{"NAME", "READY", "KIND", "SHARED", "LAYERS", "SIZE", "SHARED-BYTES", "DESCRIPTION"},
		func(ctx context.Context, _ []string) ([]client.Template, error) { return e.client().Templates(ctx) },
		func(t client.Template) []string {
			layers := ""
			if t.Layers > 0 {
				layers = fmt.Sprint(t.Layers)
			}
			return []string{t.Name, fmt.Sprint(t.Ready), orDefault(t.Kind, "rootfs"), fmt.Sprint(t.Shared), layers,
				sizeM(t.SizeBytes), sizeM(t.SharedBytes), t.Description}
		})
	cmd.AddCommand(ls, newTemplateBuildCmd(e), newTemplatePullCmd(e), newTemplateImportCmd(e),
		newTemplateExportCmd(e), newTemplatePushCmd(e), newTemplateInspectCmd(e), newTemplateRmCmd(e))
	return cmd
}

// sizeM is a size for the template table ("" for none).
func sizeM(n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0fM", float64(n)/(1<<20))
}

// progressTo prints a template stream's events on stderr.
func progressTo(e *env) func(client.TemplateEvent) {
	return func(ev client.TemplateEvent) {
		switch {
		case ev.Output != "":
			fmt.Fprint(e.stderr, ev.Output)
		case ev.Instruction != "":
			cached := ""
			if ev.Cached {
				cached = " (cached)"
			}
			fmt.Fprintf(e.stderr, "[%d/%d] %s%s\n", ev.Step, ev.Steps, ev.Instruction, cached)
		case ev.Message != "":
			fmt.Fprintln(e.stderr, ev.Message)
		}
	}
}

// debianBuild is the older `paddock template build debian`: mmdebstrap
// on this host into --data.
func debianBuild(e *env, cmd *cobra.Command, o template.DebianOptions, data string) error {
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
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func printTemplate(e *env, t client.Template) {
	fmt.Fprintf(e.stdout, "template %q ready (%s", t.Name, orDefault(t.Kind, "rootfs"))
	if t.Layers > 0 {
		fmt.Fprintf(e.stdout, ", %d layers, %s", t.Layers, sizeM(t.SizeBytes))
	}
	fmt.Fprintln(e.stdout, ")")
}
