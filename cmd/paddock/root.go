package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

// exitError carries a command's exit code out of cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// env is what every command gets: streams and a client factory.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (e *env) client() *client.Client { return client.FromEnv() }

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "paddock",
		Short:         "Self-hosted sandboxes for AI agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `Paddock runs isolated, disposable Linux sandboxes for AI agents.

Client commands talk to a server at $PADDOCK_URL (default ` + client.DefaultURL + `)
with the key in $PADDOCK_API_KEY.`,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.AddCommand(
		newServeCmd(e), newCreateCmd(e), newLsCmd(e), newInspectCmd(e), newRmCmd(e),
		newExecCmd(e), newRunCmd(e), newTemplateCmd(e), newVersionCmd(e),
		newKeyCmd(e), newTenantCmd(e),
	)
	root.AddCommand(newShellCmd(e))
	root.AddCommand(newPsCmd(e))
	root.AddCommand(newProcCmd(e))
	root.AddCommand(newCpCmd(e))
	root.AddCommand(newAuditCmd(e))
	root.AddCommand(newNetworkCmd(e))
	root.AddCommand(newMCPCmd(e))
	root.AddCommand(newBenchCmd(e))
	root.AddCommand(newSecretCmd(e))
	root.AddCommand(newBrowserCmd(e))
	root.AddCommand(newPauseCmd(e), newResumeCmd(e))  // pause.go
	root.AddCommand(newHibernateCmd(e))               // hibernate.go
	root.AddCommand(newSnapshotCmd(e), newForkCmd(e)) // snapshot.go
	root.AddCommand(newVolumeCmd(e))                  // volume.go
	root.AddCommand(newCodeCmd(e))                    // code.go
	return root
}

func run(args []string) int {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot(e)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(e.stderr, "paddock:", err)
	return 1
}
