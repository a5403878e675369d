package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

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
Authorization: Bearer {secret:GITHUB_TOKEN}. Each secret is bound to the
hosts it may be sent to (--host); a rule for any other host is refused.
A sandbox never sees a value, and no command or API ever shows one. See
docs/network.md.`,
	}
	cmd.AddCommand(newSecretSetCmd(e), newSecretBindCmd(e), newSecretLsCmd(e), newSecretRmCmd(e))
	return cmd
}

func newSecretSetCmd(e *env) *cobra.Command {
	var tenant string
	var hosts []string
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Create or replace a secret; the value is read from standard input",
		Long: `Create or replace a secret. The value is read from standard input (never
from the command line, where it would be seen in the process list and the
shell's history); one trailing newline is dropped:

  printf %s "$TOKEN" | paddock secret set GITHUB_TOKEN --host api.github.com
  paddock secret set GITHUB_TOKEN --host api.github.com < token.txt

On a terminal the value is read without echo. --host (repeatable; a name,
or name:port for a port other than 443) binds the secret to the hosts it
may be sent to; without it a replaced secret keeps its hosts and a new one
is sent nowhere until bound (paddock secret bind).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !secret.ValidName(args[0]) {
				return fmt.Errorf("secret name %q is invalid (a letter or '_', then letters, digits, '_', '.', '-')", args[0])
			}
			v, err := readSecretValue(e)
			if err != nil {
				return err
			}
			in, err := e.client().SetSecret(cmd.Context(), tenant, args[0], v, hosts...)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, in.Name)
			if len(in.Hosts) == 0 {
				fmt.Fprintf(e.stderr, "paddock: %s is bound to no host and is sent nowhere: paddock secret bind %s --host HOST\n", in.Name, in.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "another tenant's secret (admin keys only)")
	cmd.Flags().StringArrayVar(&hosts, "host", nil, "a host the secret may be sent to (repeatable; replaces the secret's hosts)")
	return cmd
}

func newSecretBindCmd(e *env) *cobra.Command {
	var tenant string
	var hosts []string
	cmd := &cobra.Command{
		Use:   "bind NAME --host HOST...",
		Short: "Replace the hosts a secret may be sent to, keeping its value",
		Long: `Replace the hosts a secret may be sent to (--host, repeatable: a name, or
name:port for a port other than 443). Sandboxes whose rules name a host
no longer bound are refused that host from their next connection.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(hosts) == 0 {
				return fmt.Errorf("give at least one --host (paddock secret rm %s stops its use everywhere)", args[0])
			}
			in, err := e.client().BindSecret(cmd.Context(), tenant, args[0], hosts)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s\t%s\n", in.Name, strings.Join(in.Hosts, ","))
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "another tenant's secret (admin keys only)")
	cmd.Flags().StringArrayVar(&hosts, "host", nil, "a host the secret may be sent to (repeatable)")
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
	cmd := listVerb(e, &cobra.Command{Use: "ls", Aliases: []string{"list"}, Short: "List secrets (names and times, never values)", Args: cobra.NoArgs},
		[]string{"NAME", "HOSTS", "CREATED", "UPDATED"},
		func(ctx context.Context, _ []string) ([]client.SecretInfo, error) {
			return e.client().ListSecrets(ctx, tenant)
		},
		func(s client.SecretInfo) []string {
			hosts := strings.Join(s.Hosts, ",")
			if hosts == "" {
				hosts = "(none: sent nowhere)"
			}
			return []string{s.Name, hosts, ago(s.CreatedAt), ago(s.UpdatedAt)}
		})
	cmd.Flags().StringVar(&tenant, "tenant", "", "another tenant's secrets (admin keys only)")
	return cmd
}

func newSecretRmCmd(e *env) *cobra.Command {
	var tenant string
	cmd := eachVerb(e, &cobra.Command{
		Use:   "rm NAME...",
		Short: "Delete secrets (sandboxes whose rules name them are refused those hosts from then on)",
		Args:  cobra.MinimumNArgs(1),
	}, func(ctx context.Context, n string) error { return e.client().DeleteSecret(ctx, tenant, n) })
	cmd.Flags().StringVar(&tenant, "tenant", "", "another tenant's secrets (admin keys only)")
	return cmd
}
