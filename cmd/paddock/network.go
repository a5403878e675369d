package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

func newNetworkCmd(e *env) *cobra.Command {
	var mode string
	var allow, cidrs, deny []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "network ID [--net none|allowlist|open] [--allow DOMAIN]... [--allow-cidr CIDR]... [--deny-cidr CIDR]...",
		Short: "Show or change a running sandbox's network policy",
		Long: `Without flags, print the sandbox's network policy. With --net, --allow or
--allow-cidr, replace it: new connections follow the new policy at once, and
open connections it no longer allows are closed.

--allow takes a host name ("api.example.com") or a wildcard over a
registrable domain ("*.example.com"), each with an optional ":port";
--allow-cidr takes IP destinations the sandbox may reach as such. Both imply
--net allowlist. --deny-cidr takes ranges an open sandbox may not reach
(then --allow and --allow-cidr are exceptions to them) and implies --net
open. See docs/network.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := e.client()
			fs := cmd.Flags()
			var n client.Network
			var err error
			if fs.Changed("net") || fs.Changed("allow") || fs.Changed("allow-cidr") || fs.Changed("deny-cidr") {
				switch {
				case mode != "":
				case len(deny) > 0:
					mode = "open"
				default:
					mode = "allowlist"
				}
				n, err = c.SetNetwork(cmd.Context(), args[0], client.Network{Mode: mode, Allow: allow, AllowCIDR: cidrs, DenyCIDR: deny})
			} else {
				n, err = c.Network(cmd.Context(), args[0])
			}
			return emit(e, asJSON, n, err, func(n client.Network) error {
				fmt.Fprintf(e.stdout, "mode: %s\n", n.Mode)
				if len(n.Allow) > 0 {
					fmt.Fprintf(e.stdout, "allow: %s\n", strings.Join(n.Allow, " "))
				}
				if len(n.AllowCIDR) > 0 {
					fmt.Fprintf(e.stdout, "allow_cidr: %s\n", strings.Join(n.AllowCIDR, " "))
				}
				if len(n.DenyCIDR) > 0 {
					fmt.Fprintf(e.stdout, "deny_cidr: %s\n", strings.Join(n.DenyCIDR, " "))
				}
				return nil
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&mode, "net", "", "network mode: none, allowlist or open")
	fs.StringArrayVar(&allow, "allow", nil, "domain the sandbox may reach (repeatable)")
	fs.StringArrayVar(&cidrs, "allow-cidr", nil, "IP destinations the sandbox may reach (repeatable)")
	fs.StringArrayVar(&deny, "deny-cidr", nil, "IP ranges an open sandbox may not reach (repeatable)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
