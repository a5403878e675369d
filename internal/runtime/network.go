package runtime

import (
	"context"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// NetPolicy is a sandbox's egress policy as backends see it (already
// validated by the manager): Mode is "none", "allowlist" or "open".
type NetPolicy struct {
	Mode      string   `json:"mode"`
	Allow     []string `json:"allow,omitempty"`      // domain patterns (allowlist mode)
	AllowCIDR []string `json:"allow_cidr,omitempty"` // IP destinations (allowlist mode; open mode's exceptions to DenyCIDR)
	DenyCIDR  []string `json:"deny_cidr,omitempty"`  // ranges open mode refuses
	// Intercept are the hosts whose HTTPS the egress proxy terminates to
	// add secrets (the spec's inject rules); with any, the setup hook
	// gives the sandbox the CA it then needs to trust.
	Intercept []string `json:"intercept,omitempty"`
}

// Networked reports whether p gives the sandbox an interface at all.
func (p *NetPolicy) Networked() bool { return p != nil && p.Mode != "" && p.Mode != "none" }

// NetSetup is what the guest installs for a network attachment.
type NetSetup struct {
	ResolvConf string            `json:"resolv_conf"`     // the whole /etc/resolv.conf
	Hosts      string            `json:"hosts,omitempty"` // lines added to /etc/hosts
	Env        map[string]string `json:"env,omitempty"`   // sandbox-wide variables (proxy settings)
	Files      map[string]string `json:"files,omitempty"` // further files, path → content (e.g. a CA bundle)
}

// NetEnvKeys are the sandbox-wide variables a network setup may set; a
// change of network unsets those the new setup does not set. Setups with
// other keys are refused (a network change must not clobber unrelated
// variables it cannot restore).
var NetEnvKeys = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
}

// LoopbackResolvConf is /etc/resolv.conf of a sandbox without network.
const LoopbackResolvConf = "# no network: this sandbox has loopback only\n"

// LoopbackOnly is the setup of a sandbox in mode "none".
func LoopbackOnly() NetSetup { return NetSetup{ResolvConf: LoopbackResolvConf} }

// Network gives sandboxes their network: an interface in the sandbox's
// network namespace, the host side's filtering, and the egress proxy and
// resolver that enforce the policy. Backends call it; the composition root
// provides it.
type Network interface {
	// Attach connects sandbox id, whose network namespace is that of pid,
	// with policy p (Networked), or changes the policy of an attached one
	// (new connections follow it at once). The returned setup is what the
	// guest must install.
	Attach(ctx context.Context, id string, pid int, p NetPolicy) (NetSetup, error)
	// Detach removes the sandbox's interface and forgets it; a no-op for a
	// sandbox that has none.
	Detach(ctx context.Context, id string) error
	// Sweep detaches every sandbox whose id is not in keep (left by a
	// crash) and returns how many it removed.
	Sweep(ctx context.Context, keep map[string]bool) (int, error)
}

// NetworkPreparer is a Network that can make a sandbox's network before
// the sandbox exists (issue 23): a backend keeps a few prepared namespaces
// and starts a networked sandbox in one, so that the kernel's namespace and
// interface work (and its wait on earlier sandboxes' teardown) is off the
// create path. Attach of a sandbox started in a prepared namespace finds
// its interface there.
type NetworkPreparer interface {
	Prepare(ctx context.Context) (PreparedNet, error)
}

// PreparedNet is a prepared network namespace.
type PreparedNet interface {
	// NetNS is a descriptor on the namespace, valid until Attach of a
	// sandbox started in it or Release.
	NetNS() int
	// Release gives it back unused (a no-op once a sandbox was attached
	// in it).
	Release()
}

// NetworkInstance is an Instance whose network can change while it runs.
type NetworkInstance interface {
	// SetNetwork attaches, re-polices or (mode "none") detaches the
	// sandbox's network and returns what the guest must now install. It
	// does not talk to the guest.
	SetNetwork(ctx context.Context, p NetPolicy) (NetSetup, error)
}

// Apply puts what the attachment needs into the agent's config: its
// resolver, hosts lines, and the variables and files added to the
// sandbox's (copies: the config's maps may be shared).
func (setup NetSetup) Apply(gc *guestapi.Config) {
	gc.ResolvConf = setup.ResolvConf
	gc.Hosts += guestapi.HostsBlock(setup.Hosts)
	if len(setup.Env) > 0 {
		gc.Env = merged(gc.Env, setup.Env)
	}
	if len(setup.Files) > 0 {
		gc.ExtraFiles = merged(gc.ExtraFiles, setup.Files)
	}
}

// merged is a new map of base's entries and over's, over's winning.
func merged(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
