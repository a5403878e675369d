package guestapi

import (
	"context"
	"strings"
)

// NetworkConfig is the head of RouteNetwork: what the guest installs
// when the sandbox's network changes while it runs (the host has already
// changed the interface and the policy; this is the sandbox's view).
type NetworkConfig struct {
	ResolvConf string `json:"resolv_conf"` // the whole /etc/resolv.conf
	// Hosts replaces the lines between HostsBegin and HostsEnd in
	// /etc/hosts ("" removes the block).
	Hosts string `json:"hosts,omitempty"`
	// Env sets, and Unset removes, sandbox-wide variables (under each
	// exec's own and the spec's).
	Env   map[string]string `json:"env,omitempty"`
	Unset []string          `json:"unset,omitempty"`
	// Files are written (absolute path → content), e.g. a CA bundle.
	Files map[string]string `json:"files,omitempty"`
}

// Markers of the network's block in /etc/hosts.
const (
	HostsBegin = "# paddock network: begin\n"
	HostsEnd   = "# paddock network: end\n"
)

// HostsBlock wraps lines in the markers ("" for no lines).
func HostsBlock(lines string) string {
	if lines == "" {
		return ""
	}
	if !strings.HasSuffix(lines, "\n") {
		lines += "\n"
	}
	return HostsBegin + lines + HostsEnd
}

// ReplaceHostsBlock returns hosts with its network block replaced by
// lines (appended if there was none).
func ReplaceHostsBlock(hosts, lines string) string {
	if i := strings.Index(hosts, HostsBegin); i >= 0 {
		rest := hosts[i+len(HostsBegin):]
		if j := strings.Index(rest, HostsEnd); j >= 0 {
			hosts = hosts[:i] + rest[j+len(HostsEnd):]
		} else {
			hosts = hosts[:i]
		}
	}
	if hosts != "" && !strings.HasSuffix(hosts, "\n") {
		hosts += "\n"
	}
	return hosts + HostsBlock(lines)
}

// SetNetwork installs cfg in the sandbox.
func (c *Client) SetNetwork(ctx context.Context, cfg NetworkConfig) error {
	return c.unary(ctx, RouteNetwork, cfg, nil)
}
