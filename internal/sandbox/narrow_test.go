package sandbox

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/wire"
)

// What a sandbox token may write in place of its sandbox's policy: the
// same or narrower (narrow.go). Each widening case has a narrowing twin.
func TestNarrows(t *testing.T) {
	rule := wire.InjectRule{Host: "api.example.com", Header: "Authorization", Value: "Bearer {secret:T}"}
	evil := wire.InjectRule{Host: "evil.example.com", Header: "Authorization", Value: "Bearer {secret:T}"}
	allow := func(a ...string) *Network { return &Network{Mode: NetAllowlist, Allow: a} }
	denyOpen := func(deny []string, a ...string) *Network { return &Network{Mode: NetOpen, DenyCIDR: deny, Allow: a} }
	withRules := func(n *Network, r ...wire.InjectRule) *Network { n.Inject = r; return n }
	for _, tc := range []struct {
		name    string
		old, n  *Network
		refused string // "" : allowed
	}{
		{"none to none", nil, &Network{Mode: NetNone}, ""},
		{"none to allowlist", nil, allow("a.example.com"), "widens"},
		{"none to open", &Network{Mode: NetNone}, &Network{Mode: NetOpen}, "widens"},
		{"allowlist to open", allow("a.example.com"), &Network{Mode: NetOpen}, "widens"},
		{"allowlist to none", allow("a.example.com"), &Network{Mode: NetNone}, ""},
		{"open to allowlist", &Network{Mode: NetOpen}, allow("anything.example.org"), ""},
		{"open to open", &Network{Mode: NetOpen}, &Network{Mode: NetOpen}, ""},
		{"allowlist subset", allow("a.example.com", "b.example.com"), allow("b.example.com"), ""},
		{"allowlist new name", allow("a.example.com"), allow("a.example.com", "c.example.com"), "c.example.com is not within"},
		{"under a wildcard", allow("*.example.com"), allow("x.example.com:443"), ""},
		{"a wildcard over a name", allow("a.example.com"), allow("*.example.com"), "not within"},
		{"any port where one was", allow("a.example.com:443"), allow("a.example.com"), "not within"},
		{"cidr inside", &Network{Mode: NetAllowlist, AllowCIDR: []string{"203.0.113.0/24"}},
			&Network{Mode: NetAllowlist, AllowCIDR: []string{"203.0.113.128/25"}}, ""},
		{"cidr wider", &Network{Mode: NetAllowlist, AllowCIDR: []string{"203.0.113.128/25"}},
			&Network{Mode: NetAllowlist, AllowCIDR: []string{"203.0.113.0/24"}}, "allow_cidr"},
		{"open to open with a deny", &Network{Mode: NetOpen}, denyOpen([]string{"203.0.113.0/24"}), ""},
		{"keep a deny, narrower exceptions", denyOpen([]string{"203.0.113.0/24"}, "a.example.com", "b.example.com"),
			denyOpen([]string{"203.0.113.0/24", "198.51.100.0/24"}, "a.example.com"), ""},
		{"drop a deny", denyOpen([]string{"203.0.113.0/24"}), &Network{Mode: NetOpen}, "must stay in deny_cidr"},
		{"narrow a deny", denyOpen([]string{"203.0.113.0/24"}), denyOpen([]string{"203.0.113.0/25"}), "must stay in deny_cidr"},
		{"add an exception", denyOpen([]string{"203.0.113.0/24"}), denyOpen([]string{"203.0.113.0/24"}, "c.example.com"), "c.example.com"},
		{"add a CIDR exception", denyOpen([]string{"203.0.113.0/24"}),
			&Network{Mode: NetOpen, DenyCIDR: []string{"203.0.113.0/24"}, AllowCIDR: []string{"203.0.113.7/32"}}, "allow_cidr"},
		{"to allowlist around the deny", denyOpen([]string{"203.0.113.0/24"}, "a.example.com"),
			&Network{Mode: NetAllowlist, Allow: []string{"a.example.com"}, AllowCIDR: []string{"192.0.2.0/24"}}, ""},
		{"to allowlist into the deny", denyOpen([]string{"203.0.113.0/24"}),
			&Network{Mode: NetAllowlist, AllowCIDR: []string{"203.0.113.0/25"}}, "overlaps"},
		{"to allowlist with a new name", denyOpen([]string{"203.0.113.0/24"}), allow("c.example.com"), "c.example.com"},
		{"keep a rule", withRules(allow("api.example.com"), rule), withRules(allow("api.example.com"), rule), ""},
		{"drop a rule", withRules(allow("api.example.com"), rule), allow("api.example.com"), ""},
		{"add a rule", withRules(&Network{Mode: NetOpen}, rule), withRules(&Network{Mode: NetOpen}, rule, evil), "cannot add inject rules"},
		{"change a rule's value", withRules(&Network{Mode: NetOpen}, rule),
			withRules(&Network{Mode: NetOpen}, wire.InjectRule{Host: rule.Host, Header: "X-Leak", Value: rule.Value}), "cannot add inject rules"},
	} {
		err := narrows(tc.old, tc.n)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: %v, want a refusal with %q", tc.name, err, tc.refused)
		}
	}
}
