package e2b

import (
	"maps"
	"net/netip"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// E2B's egress model, onto Paddock's policy:
//
//   - A sandbox has internet or not (allow_internet_access; E2B's API gives
//     it when the create does not say — the server's DefaultInternet here).
//     No internet is denyOut [0.0.0.0/0].
//   - allowOut entries are exceptions to denyOut (an allowed entry wins
//     over a denied one): allowOut without a deny restricts nothing; with
//     "deny all" it is an allowlist (names, IPs, CIDRs); with narrower
//     denies (IPs, CIDRs — E2B takes no names there) it is open mode with
//     deny_cidr, allowOut its exceptions. allowOut 0.0.0.0/0 is open.
//   - An update (PUT /sandboxes/{id}/network) replaces the lists only: the
//     sandbox's internet choice at create stays, so {} gives a sandbox
//     created with internet its full access back.
//
// Request transforms are transform.go's. Egress proxies and the URL
// options Paddock does not implement are refused, never ignored. allowPublicTraffic and maskRequestHost are ports.go's.

// internetLabel keeps, on the sandbox, its internet choice at create (what
// updates start from). It is Paddock's, not the user's: hidden from E2B's
// metadata and refused in it.
const internetLabel = "paddock.e2b/internet"

// createInternet is a create's internet choice: what it says, else the
// server's default.
func (s *Server) createInternet(b *createBody) (bool, error) {
	internet := s.o.DefaultInternet
	said := b.AllowInternetAccess
	if b.Network != nil && b.Network.AllowInternetAccess != nil {
		if said != nil && *said != *b.Network.AllowInternetAccess {
			return false, errs.Invalid("allow_internet_access is given twice, differently")
		}
		said = b.Network.AllowInternetAccess
	}
	if said != nil {
		internet = *said
	}
	return internet, nil
}

// baseInternet is a running sandbox's internet choice at create; a sandbox
// made through Paddock's own API has internet when its mode is open.
func baseInternet(sb sandbox.Sandbox) bool {
	if v, ok := sb.Spec.Labels[internetLabel]; ok {
		return v == "true"
	}
	return sb.Spec.Network != nil && sb.Spec.Network.Mode == sandbox.NetOpen
}

// withInternetLabel is the sandbox's labels: the user's metadata and the
// internet choice.
func withInternetLabel(meta map[string]string, internet bool) (map[string]string, error) {
	if _, ok := meta[internetLabel]; ok {
		return nil, errs.Invalid("metadata key %s is reserved by Paddock", internetLabel)
	}
	out := make(map[string]string, len(meta)+1)
	maps.Copy(out, meta)
	out[internetLabel] = strconv.FormatBool(internet)
	return out, nil
}

// userMetadata is what E2B calls a sandbox's metadata: its labels without
// Paddock's own.
func userMetadata(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != internetLabel {
			out[k] = v
		}
	}
	return out
}

// networkFor maps an internet choice, E2B's egress lists and its
// transform rules (transform.go) onto a Paddock network policy.
func networkFor(internet bool, n *e2bNetwork) (*sandbox.Network, error) {
	out, err := egressFor(internet, n)
	if err != nil || n == nil {
		return out, err
	}
	if out.Inject, err = transformRules(n.Rules); err != nil {
		return nil, err
	}
	if err := checkRuleReach(out); err != nil {
		return nil, err
	}
	return out, nil
}

// egressFor maps an internet choice and E2B's egress lists onto a Paddock
// network policy (without rules).
func egressFor(internet bool, n *e2bNetwork) (*sandbox.Network, error) {
	var allow, deny []string
	if n != nil {
		switch {
		case present(n.EgressProxy):
			return nil, errs.New(errs.CodeUnsupported, "network.egressProxy is not supported by Paddock")
		case len(n.HTTPSPorts) > 0:
			return nil, errs.New(errs.CodeUnsupported, "network.httpsPorts is not supported by Paddock")
		}
		allow, deny = n.AllowOut, n.DenyOut
	}
	denyAll := !internet
	var denyCIDR []string
	for i, d := range deny {
		d = strings.TrimSpace(d)
		switch {
		case d == allTraffic || d == "::/0":
			denyAll = true
		case isAddress(d):
			denyCIDR = append(denyCIDR, d)
		default:
			return nil, errs.Invalid("network.denyOut[%d] %s: a deny entry is an IP address or a CIDR (E2B takes no domain names there)", i, quoteText(d))
		}
	}
	for _, a := range allow {
		if strings.TrimSpace(a) == allTraffic {
			return &sandbox.Network{Mode: sandbox.NetOpen}, nil // allow wins over every deny
		}
	}
	if !denyAll && len(denyCIDR) == 0 {
		return &sandbox.Network{Mode: sandbox.NetOpen}, nil // allowOut is only exceptions to a deny
	}
	if denyAll && len(allow) == 0 {
		return &sandbox.Network{Mode: sandbox.NetNone}, nil // narrower denies are within "all"
	}
	out := &sandbox.Network{Mode: sandbox.NetAllowlist}
	if !denyAll {
		out = &sandbox.Network{Mode: sandbox.NetOpen, DenyCIDR: denyCIDR}
	}
	for _, a := range allow {
		a = strings.TrimSpace(a)
		if isAddress(a) {
			out.AllowCIDR = append(out.AllowCIDR, a)
		} else {
			out.Allow = append(out.Allow, a)
		}
	}
	return out, nil
}

// hostAddrs writes single-address prefixes (1.2.3.4/32, as Paddock stores
// an allowed IP) as the address E2B's callers gave.
func hostAddrs(cidrs []string) []string {
	out := make([]string, 0, len(cidrs))
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil && p.IsSingleIP() {
			c = p.Addr().String()
		}
		out = append(out, c)
	}
	return out
}
