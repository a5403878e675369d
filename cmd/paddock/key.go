package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

func newKeyCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Manage API keys (needs an admin key)"}
	cmd.AddCommand(newKeyCreateCmd(e), newKeyLsCmd(e), newKeyRevokeCmd(e))
	return cmd
}

func newKeyCreateCmd(e *env) *cobra.Command {
	var req client.KeyRequest
	var scopes []string
	var expires string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --tenant T [--scope S]...",
		Short: "Create an API key; it is printed once",
		Long: `Create an API key for a tenant. The key is printed on standard output, once:
the server keeps only its hash. Scopes: read, write, exec, admin (admin only
for keys of the "default" tenant). Without --scope the key gets read, write
and exec.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.Tenant == "" {
				return fmt.Errorf("--tenant is required")
			}
			if len(scopes) == 0 {
				scopes = []string{"read", "write", "exec"}
			}
			for _, s := range scopes {
				for _, part := range strings.Split(s, ",") {
					if part = strings.TrimSpace(part); part != "" {
						req.Scopes = append(req.Scopes, client.Scope(part))
					}
				}
			}
			if expires != "" {
				d, err := parseDuration(expires)
				if err != nil || d <= 0 {
					return fmt.Errorf("--expires: want a duration such as 720h (got %q)", expires)
				}
				t := time.Now().Add(d)
				req.ExpiresAt = &t
			}
			k, err := e.client().CreateKey(cmd.Context(), req)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, k)
			}
			fmt.Fprintln(e.stdout, k.Key)
			fmt.Fprintf(e.stderr, "Created %s for tenant %s (scopes %s). The key is shown only this once; store it now.\n",
				k.ID, k.Tenant, joinScopes(k.Scopes))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&req.Tenant, "tenant", "", "tenant the key belongs to (required)")
	fs.StringArrayVar(&scopes, "scope", nil, "scope: read, write, exec or admin (repeatable; default read, write, exec)")
	fs.StringVar(&req.Name, "name", "", "a name, to recognise the key by")
	fs.StringVar(&req.Description, "description", "", "what the key is for")
	fs.StringVar(&expires, "expires", "", "expire after this long, e.g. 720h (default: never)")
	fs.StringVar(&req.Format, "format", "", "key form: paddock (pdk_..., default) or e2b (e2b_ + hex, for E2B SDKs)")
	fs.BoolVar(&asJSON, "json", false, "print JSON (including the key)")
	return cmd
}

func newKeyLsCmd(e *env) *cobra.Command {
	var tenantName string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List API keys (never the keys themselves)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := e.client().ListKeys(cmd.Context(), tenantName)
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []client.Key{}
				}
				return printJSON(e.stdout, list)
			}
			rows := make([][]string, 0, len(list))
			for _, k := range list {
				used, exp, state := "never", "never", "active"
				if k.LastUsedAt != nil {
					used = ago(*k.LastUsedAt)
				}
				if k.ExpiresAt != nil {
					exp = until(*k.ExpiresAt)
					if exp == "expired" {
						state = "expired"
					}
				}
				if k.Revoked {
					state = "revoked"
				}
				rows = append(rows, []string{k.ID, k.Tenant, k.Name, joinScopes(k.Scopes), k.Hint + "…",
					ago(k.CreatedAt), used, exp, state})
			}
			table(e.stdout, []string{"ID", "TENANT", "NAME", "SCOPES", "KEY", "CREATED", "LAST USED", "EXPIRES IN", "STATE"}, rows)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenantName, "tenant", "", "only this tenant's keys")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newKeyRevokeCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID...",
		Short: "Revoke API keys (and every sandbox token they minted), at once",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.eachArg(args, func(id string) error { return e.client().RevokeKey(cmd.Context(), id) })
		},
	}
}

func joinScopes(s []client.Scope) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, ",")
}
