package sandbox

import (
	"reflect"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

func TestNormalizeNetwork(t *testing.T) {
	l := DefaultLimits(2)
	for _, tc := range []struct {
		in   *Network
		want *Network
		err  string
	}{
		{in: nil, want: &Network{Mode: "none"}},
		{in: &Network{}, want: &Network{Mode: "none"}},
		{in: &Network{Mode: "open"}, want: &Network{Mode: "open"}},
		{in: &Network{Mode: "allowlist", Allow: []string{"API.Example.com.", "api.example.com", "*.pypi.org:443"}, AllowCIDR: []string{"203.0.113.7"}},
			want: &Network{Mode: "allowlist", Allow: []string{"api.example.com", "*.pypi.org:443"}, AllowCIDR: []string{"203.0.113.7/32"}}},
		{in: &Network{Mode: "allowlist"}, want: &Network{Mode: "allowlist"}},
		{in: &Network{Mode: "allowlist", Allow: []string{"*.com"}}, err: "public suffix"},
		{in: &Network{Mode: "none", AllowCIDR: []string{"10.0.0.0/8"}}, err: "needs network mode allowlist"},
		{in: &Network{Mode: "everything"}, err: `network.mode "everything"`},
		{in: &Network{Mode: "open", DenyCIDR: []string{"203.0.113.0/24", "198.51.100.9"}, Allow: []string{"API.example.com"}, AllowCIDR: []string{"203.0.113.7"}},
			want: &Network{Mode: "open", DenyCIDR: []string{"203.0.113.0/24", "198.51.100.9/32"}, Allow: []string{"api.example.com"}, AllowCIDR: []string{"203.0.113.7/32"}}},
		{in: &Network{Mode: "open", DenyCIDR: []string{"example.com"}}, err: "deny_cidr[0]"},
		{in: &Network{Mode: "allowlist", DenyCIDR: []string{"10.0.0.0/8"}}, err: "needs network mode open"},
		{in: &Network{Mode: "open", Allow: []string{"api.example.com"}}, err: "open mode"},
	} {
		s, err := l.Normalize(Spec{Network: tc.in})
		if tc.err != "" {
			if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: %v, want invalid_argument %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(s.Network, tc.want) {
			t.Errorf("%+v: %+v %v, want %+v", tc.in, s.Network, err, tc.want)
		}
	}
	if runtimeNetwork(&Network{Mode: "none"}) != nil || runtimeNetwork(nil) != nil {
		t.Error("mode none must give the backend no network")
	}
	if p := runtimeNetwork(&Network{Mode: "open"}); p == nil || !p.Networked() {
		t.Error("mode open must be networked")
	}
}

func TestGuestNetworkUnsetsWhatTheSetupDoesNotSet(t *testing.T) {
	c := guestNetwork(runtimeSetup(map[string]string{"HTTP_PROXY": "http://10.201.0.1:15001"}))
	for _, k := range c.Unset {
		if k == "HTTP_PROXY" {
			t.Error("a variable the setup sets is unset")
		}
	}
	found := false
	for _, k := range c.Unset {
		found = found || k == "HTTPS_PROXY"
	}
	if !found {
		t.Errorf("HTTPS_PROXY is not unset: %v", c.Unset)
	}
}

func runtimeSetup(env map[string]string) runtime.NetSetup { return runtime.NetSetup{Env: env} }
