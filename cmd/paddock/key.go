package main

import (
	"context"
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
	cmd := &cobra.Command{
		Use:   "create --tenant T [--scope S]...",
		Short: "Create an API key; it is printed once",
		Long: `Create an API key for a tenant. The key is printed on standard output, once:
the server keeps only its hash. Scopes: read, write, exec, admin (admin only
for keys of the "default" tenant). Without --scope the key gets read, write
and exec.`,
		Args: cobra.NoArgs,
	}
	resultVerb(e, cmd, "print JSON (including the key)", func(ctx context.Context, _ []string) (client.CreatedKey, error) {
		if req.Tenant == "" {
			return client.CreatedKey{}, fmt.Errorf("--tenant is required")
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
				return client.CreatedKey{}, fmt.Errorf("--expires: want a duration such as 720h (got %q)", expires)
			}
			t := time.Now().Add(d)
			req.ExpiresAt = &t
		}
		return e.client().CreateKey(ctx, req)
	}, func(k client.CreatedKey) error {
		fmt.Fprintln(e.stdout, k.Key)
		fmt.Fprintf(e.stderr, "Created %s for tenant %s (scopes %s). The key is shown only this once; store it now.\n",
			k.ID, k.Tenant, joinScopes(k.Scopes))
		return nil
	})
	fs := cmd.Flags()
	fs.StringVar(&req.Tenant, "tenant", "", "tenant the key belongs to (required)")
	fs.StringArrayVar(&scopes, "scope", nil, "scope: read, write, exec or admin (repeatable; default read, write, exec)")
	fs.StringVar(&req.Name, "name", "", "a name, to recognise the key by")
	fs.StringVar(&req.Description, "description", "", "what the key is for")
	fs.StringVar(&expires, "expires", "", "expire after this long, e.g. 720h (default: never)")
	fs.StringVar(&req.Format, "format", "", "key form: paddock (pdk_..., default) or e2b (e2b_ + hex, for E2B SDKs)")
	return cmd
}

func newKeyLsCmd(e *env) *cobra.Command {
	var tenantName string
	cmd := listVerb(e, &cobra.Command{Use: "ls", Aliases: []string{"list"}, Short: "List API keys (never the keys themselves)", Args: cobra.NoArgs},
		[]string{"ID", "TENANT", "NAME", "SCOPES", "KEY", "CREATED", "LAST USED", "EXPIRES IN", "STATE"},
		func(ctx context.Context, _ []string) ([]client.Key, error) {
			return e.client().ListKeys(ctx, tenantName)
		},
		func(k client.Key) []string {
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
			return []string{k.ID, k.Tenant, k.Name, joinScopes(k.Scopes), k.Hint + "…",
				ago(k.CreatedAt), used, exp, state}
		})
	cmd.Flags().StringVar(&tenantName, "tenant", "", "only this tenant's keys")
	return cmd
}

func newKeyRevokeCmd(e *env) *cobra.Command {
	return eachVerb(e, &cobra.Command{
		Use:   "revoke ID...",
		Short: "Revoke API keys (and every sandbox token they minted), at once",
		Args:  cobra.MinimumNArgs(1),
	}, func(ctx context.Context, id string) error { return e.client().RevokeKey(ctx, id) })
}

func joinScopes(s []client.Scope) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, ",")
}
