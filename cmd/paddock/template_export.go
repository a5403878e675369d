package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func newTemplateExportCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export NAME -o FILE",
		Short: "Download an image template as an oci-archive (- for stdout)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var w io.Writer = e.stdout
			if out != "-" {
				f, err := os.OpenFile(out+".part", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					return err
				}
				defer os.Remove(out + ".part")
				defer f.Close()
				w = f
			}
			n, err := e.client().ExportTemplate(cmd.Context(), args[0], w)
			if err != nil {
				return err
			}
			if out != "-" {
				if err := os.Rename(out+".part", out); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "wrote %s (%d bytes)\n", out, n)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write (- for stdout)")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}
