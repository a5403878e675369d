package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

// newHibernateCmd is `paddock hibernate ID...` (docs/state.md): gVisor
// sandboxes checkpointed to disk, their memory released; `paddock resume`
// restores them.
func newHibernateCmd(e *env) *cobra.Command {
	return lifecycleCmd(e, "hibernate ID...", "Hibernate gVisor sandboxes: checkpoint processes and memory to disk and release their RAM (paddock resume restores them)",
		func(c *client.Client) func(context.Context, string) (client.Sandbox, error) { return c.Hibernate })
}
