package sandbox

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/wire"
)

func TestNormalizeInject(t *testing.T) {
	rule := func(host string) []wire.InjectRule {
		return []wire.InjectRule{{Host: host, Header: "authorization", Value: "Bearer {secret:T}"}}
	}
	for _, tc := range []struct {
		n    Network
		want string // "" for accepted
	}{
		{Network{Mode: NetAllowlist, Allow: []string{"api.example.com"}, Inject: rule("API.example.com")}, ""},
		{Network{Mode: NetAllowlist, Allow: []string{"*.example.com"}, Inject: rule("api.example.com")}, ""},
		{Network{Mode: NetAllowlist, Allow: []string{"api.example.com:443"}, Inject: rule("api.example.com")}, ""},
		{Network{Mode: NetAllowlist, Allow: []string{"api.example.com:8443"}, Inject: rule("api.example.com:8443")}, ""},
		{Network{Mode: NetOpen, Inject: rule("api.example.com")}, ""},
		{Network{Mode: NetAllowlist, Allow: []string{"other.example.com"}, Inject: rule("api.example.com")}, "not allowed by the policy"},
		{Network{Mode: NetAllowlist, Allow: []string{"api.example.com:8443"}, Inject: rule("api.example.com")}, "not allowed by the policy"},
		{Network{Mode: NetNone, Inject: rule("api.example.com")}, "needs network mode"},
		{Network{Inject: rule("api.example.com")}, "needs network mode"},
		{Network{Mode: NetOpen, Inject: rule("*.example.com")}, "wildcards"},
	} {
		out, err := NormalizeNetwork(&tc.n)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.n, err)
				continue
			}
			if out.Inject[0].Header != "Authorization" || strings.ToLower(out.Inject[0].Host) != out.Inject[0].Host {
				t.Errorf("not canonical: %+v", out.Inject)
			}
			if p := runtimeNetwork(out); p == nil || len(p.Intercept) != 1 || p.Intercept[0] != out.Inject[0].Host {
				t.Errorf("the backend is not told the inject host: %+v", p)
			}
			continue
		}
		if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an invalid_argument about %q", tc.n, err, tc.want)
		}
	}
	if p := runtimeNetwork(&Network{Mode: NetAllowlist, Allow: []string{"a.com"}}); p == nil || p.Intercept != nil {
		t.Errorf("no rules, yet Intercept: %+v", p)
	}
}
