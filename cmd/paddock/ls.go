package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

func newLsCmd(e *env) *cobra.Command {
	var labels []string
	cmd := listVerb(e, &cobra.Command{Use: "ls", Aliases: []string{"list"}, Short: "List sandboxes", Args: cobra.NoArgs},
		[]string{"ID", "STATE", "TEMPLATE", "CPU", "MEMORY", "CREATED", "EXPIRES IN", "LABELS"},
		func(ctx context.Context, _ []string) ([]client.Sandbox, error) {
			match, err := parseKV("--label", labels)
			if err != nil {
				return nil, err
			}
			return e.client().List(ctx, match)
		},
		func(sb client.Sandbox) []string {
			return []string{sb.ID, string(sb.State), sb.Spec.Template,
				fmt.Sprintf("%g", sb.Spec.CPU), fmt.Sprintf("%dM", sb.Spec.MemoryMB),
				ago(sb.CreatedAt), until(sb.ExpiresAt), fmtLabels(sb.Spec.Labels)}
		})
	cmd.Flags().StringArrayVar(&labels, "label", nil, "only sandboxes with label KEY=VALUE (repeatable)")
	return cmd
}

func newInspectCmd(e *env) *cobra.Command {
	return showVerb(e, &cobra.Command{Use: "inspect ID", Short: "Show a sandbox as JSON", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, args []string) (client.Sandbox, error) { return e.client().Get(ctx, args[0]) })
}

func newRmCmd(e *env) *cobra.Command {
	return eachVerb(e, &cobra.Command{Use: "rm ID...", Aliases: []string{"delete"}, Short: "Destroy sandboxes", Args: cobra.MinimumNArgs(1)},
		func(ctx context.Context, id string) error { return e.client().Delete(ctx, id) })
}
