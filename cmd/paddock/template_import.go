package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func newTemplateImportCmd(e *env) *cobra.Command {
	var name, tag string
	var shared, replace bool
	cmd := &cobra.Command{
		Use:   "import FILE --name NAME",
		Short: "Import a docker save tarball, an OCI image layout (as a tar) or an oci-archive",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if name == "" {
				return fmt.Errorf("--name is required")
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s is not a file (tar an OCI layout directory first)", args[0])
			}
			t, err := e.client().ImportTemplate(cmd.Context(), name, tag, shared, replace, f, fi.Size(), progressTo(e))
			if err != nil {
				return err
			}
			printTemplate(e, t)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "", "the template's name")
	fs.StringVar(&tag, "tag", "", "the image to take from an archive holding several")
	fs.BoolVar(&replace, "replace", false, "replace an existing template of that name")
	fs.BoolVar(&shared, "shared", false, "publish it for every tenant (admin key)")
	return cmd
}
