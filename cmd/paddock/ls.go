package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newLsCmd(e *env) *cobra.Command {
	var asJSON bool
	var labels []string
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List sandboxes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			match, err := parseKV("--label", labels)
			if err != nil {
				return err
			}
			list, err := e.client().List(cmd.Context(), match)
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					return printJSON(e.stdout, []any{})
				}
				return printJSON(e.stdout, list)
			}
			rows := make([][]string, 0, len(list))
			for _, sb := range list {
				rows = append(rows, []string{sb.ID, string(sb.State), sb.Spec.Template,
					fmt.Sprintf("%g", sb.Spec.CPU), fmt.Sprintf("%dM", sb.Spec.MemoryMB),
					ago(sb.CreatedAt), until(sb.ExpiresAt), fmtLabels(sb.Spec.Labels)})
			}
			table(e.stdout, []string{"ID", "STATE", "TEMPLATE", "CPU", "MEMORY", "CREATED", "EXPIRES IN", "LABELS"}, rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "only sandboxes with label KEY=VALUE (repeatable)")
	return cmd
}

func newInspectCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect ID",
		Short: "Show a sandbox as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sb, err := e.client().Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printJSON(e.stdout, sb)
		},
	}
}

func newRmCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID...",
		Aliases: []string{"delete"},
		Short:   "Destroy sandboxes",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.eachArg(args, func(id string) error { return e.client().Delete(cmd.Context(), id) })
		},
	}
}
