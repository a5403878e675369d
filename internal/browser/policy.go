package browser

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// policyRefuses reports whether the sandbox's network policy n refuses
// the destination of u by itself, and words why. It explains a failed
// navigation; the kernel and the egress proxy are what enforce the
// policy. The sandbox's own loopback is never refused.
func policyRefuses(n *sandbox.Network, u *url.URL) (bool, string) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return false, ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false, ""
	}
	addr, addrErr := netip.ParseAddr(host)
	if addrErr == nil && addr.Unmap().IsLoopback() {
		return false, ""
	}
	mode, allow, cidrs, deny := sandbox.NetNone, []string(nil), []string(nil), []string(nil)
	if n != nil && n.Mode != "" {
		mode, allow, cidrs, deny = n.Mode, n.Allow, n.AllowCIDR, n.DenyCIDR
	}
	p, err := policy.CompileDeny(mode, allow, cidrs, deny)
	if err != nil {
		return false, ""
	}
	switch p.Mode {
	case policy.ModeNone:
		return true, `its mode is "none": the sandbox reaches nothing outside itself (loopback only)`
	case policy.ModeOpen:
		return false, ""
	}
	port := 80
	if scheme == "https" {
		port = 443
	}
	if ps := u.Port(); ps != "" {
		if v, err := strconv.Atoi(ps); err == nil {
			port = v
		}
	}
	list := "allowlist " + describeList(p.Allow(), p.CIDRs())
	if addrErr == nil {
		if _, ok := p.AllowAddr(addr); !ok {
			return true, "the " + list + " does not include the address " + addr.String()
		}
		return false, ""
	}
	name, ok := policy.NormalizeName(host)
	if !ok {
		return false, ""
	}
	if _, ok := p.AllowName(name, port); !ok {
		return true, "the " + list + " does not include " + name + ":" + strconv.Itoa(port)
	}
	return false, ""
}

func describeList(names, cidrs []string) string {
	all := append(append([]string{}, names...), cidrs...)
	if len(all) == 0 {
		return "(empty)"
	}
	if len(all) > 8 {
		return "(" + strings.Join(all[:8], ", ") + ", and " + strconv.Itoa(len(all)-8) + " more)"
	}
	return "(" + strings.Join(all, ", ") + ")"
}
