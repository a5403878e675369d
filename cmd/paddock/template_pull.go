package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

func newTemplatePullCmd(e *env) *cobra.Command {
	var req client.TemplatePullRequest
	var start, ready string
	cmd := &cobra.Command{
		Use:   "pull REF",
		Short: "Pull an OCI image from a registry as a template",
		Long: `Pull [REGISTRY/]REPO[:TAG|@DIGEST] as a template (default name: the repository's
last path element). The server holds the registry credentials (--registry-auth,
or your tenant's REGISTRY_AUTH secret bound to the registry's host).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Ref = args[0]
			req.StartCmd, req.ReadyCmd = shellCmd(start), shellCmd(ready)
			t, err := e.client().PullTemplate(cmd.Context(), req, progressTo(e))
			if err != nil {
				return err
			}
			printTemplate(e, t)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&req.Name, "name", "", "the template's name")
	fs.BoolVar(&req.Replace, "replace", false, "replace an existing template of that name")
	fs.BoolVar(&req.Shared, "shared", false, "publish it for every tenant (admin key)")
	fs.StringVar(&start, "start-cmd", "", "a shell command sandboxes of it start at create")
	fs.StringVar(&ready, "ready-cmd", "", "a shell command that exits 0 once the start command is ready")
	return cmd
}

func shellCmd(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []string{"/bin/sh", "-c", s}
}
