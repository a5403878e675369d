package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newTemplateInspectCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect NAME",
		Short: "Show a template: its source, layers, sizes and sandbox defaults (JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := e.client().Template(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printJSON(e.stdout, t)
		},
	}
}

func newTemplateRmCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME...",
		Short: "Remove templates (refused while sandboxes use them)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, n := range args {
				if err := e.client().DeleteTemplate(cmd.Context(), n); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "removed %s\n", n)
			}
			return nil
		},
	}
}
