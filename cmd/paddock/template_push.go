package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newTemplatePushCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "push NAME REF",
		Short: "Push an image template to a registry",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := e.client().PushTemplate(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "pushed %s to %s\n", args[0], args[1])
			return nil
		},
	}
}
