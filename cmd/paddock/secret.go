package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/secret"
)

func newSecretCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Manage secrets the egress proxy adds to sandboxes' requests",
		Long: `Secrets live in the server, encrypted, and are referenced by name in a
sandbox's network.inject rules, e.g. for requests to api.github.com set
Authorization: Bearer {secret:GITHUB_TOKEN}. A sandbox never sees a value,
and no command or API ever shows one. See docs/network.md.`,
	}
	cmd.AddCommand(newSecretSetCmd(e), newSecretLsCmd(e), newSecretRmCmd(e))
	return cmd
}

func newSecretSetCmd(e *env) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Create or replace a secret; the value is read from standard input",
		Long: `Create or replace a secret. The value is read from standard input (never
from the command line, where it would be seen in the process list and the
shell's history); one trailing newline is dropped:

  printf %s "$TOKEN" | paddock secret set GITHUB_TOKEN
  paddock secret set GITHUB_TOKEN < token.txt

On a terminal the value is read without echo.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !secret.ValidName(args[0]) {
				return fmt.Errorf("secret name %q is invalid (a letter or '_', then letters, digits, '_', '.', '-')", args[0])
			}
			v, err := readSecretValue(e)
			if err != nil {
				return err
			}
			in, err := e.client().SetSecret(cmd.Context(), tenant, args[0], v)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, in.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "another tenant's secret (admin keys only)")
	return cmd
}

// readSecretValue reads the value from stdin (without echo on a
// terminal), bounded, with one trailing newline dropped.
func readSecretValue(e *env) (string, error) {
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(e.stderr, "Value (not shown): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		if err != nil {
			return "", fmt.Errorf("read the value: %w", err)
		}
		return checkSecretValue(b)
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, secret.MaxValueBytes+3))
	if err != nil {
		return "", fmt.Errorf("read the value from standard input: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return checkSecretValue(b)
}

func checkSecretValue(b []byte) (string, error) {
	if len(b) == 0 {
		return "", fmt.Errorf("no value on standard input (e.g. printf %%s \"$TOKEN\" | paddock secret set NAME)")
	}
	if err := secret.CheckValue(b); err != nil {
		return "", err
	}
	return string(b), nil
}

func newSecretLsCmd(e *env) *cobra.Command {
	var tenant string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List secrets (names and times, never values)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := e.client().ListSecrets(cmd.Context(), tenant)
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []client.SecretInfo{}
				}
				return printJSON(e.stdout, list)
			}
			rows := make([][]string, 0, len(list))
			for _, s := range list {
				rows = append(rows, []string{s.Name, ago(s.CreatedAt), ago(s.UpdatedAt)})
			}
			table(e.stdout, []string{"NAME", "CREATED", "UPDATED"}, rows)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "another tenant's secrets (admin keys only)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newSecretRmCmd(e *env) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "rm NAME...",
		Short: "Delete secrets (sandboxes whose rules name them are refused those hosts from then on)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.eachArg(args, func(n string) error { return e.client().DeleteSecret(cmd.Context(), tenant, n) })
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "another tenant's secrets (admin keys only)")
	return cmd
}
