package e2b

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/wire"
)

// TestNetworkTransformRules: rules[domain].transform.headers become inject
// rules (placeholders as Paddock's), and what is not a header E2B's
// callers could mean is refused, naming the entry.
func TestNetworkTransformRules(t *testing.T) {
	got, err := networkFor(true, &e2bNetwork{Rules: json.RawMessage(`{
		"API.example.com": [{"transform": {"headers": {"authorization": "Bearer ${e2b.secrets.api-key}", "X-Trace": "a"}}},
		                    {"transform": {"headers": {"x-trace": "b"}}}, {}],
		"other.example": [{"transform": {"headers": {"X-Two": "${e2b.secrets.A}:${e2b.secrets.b_2}"}}}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := &sandbox.Network{Mode: sandbox.NetOpen, Inject: []wire.InjectRule{
		{Host: "api.example.com", Header: "Authorization", Value: "Bearer {secret:api-key}"},
		{Host: "api.example.com", Header: "X-Trace", Value: "b"}, // the later rule's
		{Host: "other.example", Header: "X-Two", Value: "{secret:A}:{secret:b_2}"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
	norm, err := sandbox.NormalizeNetwork(got)
	if err != nil {
		t.Fatalf("not a valid policy: %v", err)
	}
	if diff := cmp.Diff(want.Inject, norm.Inject); diff != "" {
		t.Fatal("normalised differently:", diff)
	}
	// getInfo shows them back as E2B wrote them (one rule per domain).
	in := info(sandbox.Sandbox{Spec: sandbox.Spec{Network: norm}}, true)
	wantInfo := map[string][]e2bRule{
		"api.example.com": {{Transform: &e2bTransform{Headers: map[string]string{"Authorization": "Bearer ${e2b.secrets.api-key}", "X-Trace": "b"}}}},
		"other.example":   {{Transform: &e2bTransform{Headers: map[string]string{"X-Two": "${e2b.secrets.A}:${e2b.secrets.b_2}"}}}}}
	if in.Network == nil || !cmp.Equal(wantInfo, in.Network.Rules) {
		t.Fatalf("info rules: %s", cmp.Diff(wantInfo, in.Network))
	}
	// An allowlist takes rules for the domains it allows, and no other.
	if _, err := networkFor(false, &e2bNetwork{AllowOut: []string{"api.example.com"},
		Rules: json.RawMessage(`{"api.example.com":[{"transform":{"headers":{"X-A":"1"}}}]}`)}); err != nil {
		t.Fatalf("an allowed domain: %v", err)
	}

	many := map[string][]e2bRule{}
	for i := 0; i <= maxRuleDomains; i++ {
		many[strings.Repeat("a", i+1)+".example"] = nil
	}
	manyRaw, _ := json.Marshal(many)
	headers := map[string]string{}
	for i := 0; i <= secret.MaxRules; i++ {
		headers["X-H"+strings.Repeat("a", i)] = "v"
	}
	manyHeaders, _ := json.Marshal(map[string][]e2bRule{"a.example": {{Transform: &e2bTransform{Headers: headers}}}})
	for _, tc := range []struct {
		name, rules string
		allow       []string
		code        errs.Code
		want        string
	}{
		{"not an object", `[]`, nil, errs.CodeInvalid, "network.rules: want"},
		{"an unknown transform", `{"a.example":[{"transform":{"body":{}}}]}`, nil, errs.CodeInvalid, "only header transforms"},
		{"a wildcard domain", `{"*.example.com":[{"transform":{"headers":{"X-A":"1"}}}]}`, nil, errs.CodeUnsupported, "wildcard"},
		{"an IP", `{"203.0.113.7":[{"transform":{"headers":{"X-A":"1"}}}]}`, nil, errs.CodeInvalid, "domain name"},
		{"a port", `{"a.example:8443":[{"transform":{"headers":{"X-A":"1"}}}]}`, nil, errs.CodeInvalid, "not a valid domain"},
		{"a domain twice", `{"a.example":[],"A.example":[]}`, nil, errs.CodeInvalid, "twice"},
		{"a hop-by-hop header", `{"a.example":[{"transform":{"headers":{"Connection":"close"}}}]}`, nil, errs.CodeInvalid, `headers["Connection"]`},
		{"Transfer-Encoding", `{"a.example":[{"transform":{"headers":{"transfer-encoding":"chunked"}}}]}`, nil, errs.CodeInvalid, "cannot be injected"},
		{"Host", `{"a.example":[{"transform":{"headers":{"Host":"evil.example"}}}]}`, nil, errs.CodeInvalid, "cannot be injected"},
		{"a proxy header", `{"a.example":[{"transform":{"headers":{"Proxy-Authorization":"x"}}}]}`, nil, errs.CodeInvalid, "cannot be injected"},
		{"a bad header name", `{"a.example":[{"transform":{"headers":{"Bad Header":"x"}}}]}`, nil, errs.CodeInvalid, "not a valid header name"},
		{"CRLF in a value", `{"a.example":[{"transform":{"headers":{"X-A":"x\r\nInjected: 1"}}}]}`, nil, errs.CodeInvalid, "not allowed in an HTTP header"},
		{"an oversized value", `{"a.example":[{"transform":{"headers":{"X-A":"` + strings.Repeat("x", secret.MaxTemplateBytes+1) + `"}}}]}`, nil, errs.CodeInvalid, "at most"},
		{"too many domains", string(manyRaw), nil, errs.CodeInvalid, "at most 16 domains"},
		{"too many headers", string(manyHeaders), nil, errs.CodeInvalid, "headers in all"},
		{"Paddock's own placeholder", `{"a.example":[{"transform":{"headers":{"X-A":"{secret:K}"}}}]}`, nil, errs.CodeInvalid, "reserved"},
		{"an identity token", `{"a.example":[{"transform":{"headers":{"X-A":"${e2b.identity.tokens.aws}"}}}]}`, nil, errs.CodeUnsupported, "identity"},
		{"an unterminated placeholder", `{"a.example":[{"transform":{"headers":{"X-A":"${e2b.secrets.k"}}}]}`, nil, errs.CodeInvalid, "unterminated"},
		{"a name Paddock cannot hold", `{"a.example":[{"transform":{"headers":{"X-A":"${e2b.secrets.a b}"}}}]}`, nil, errs.CodeInvalid, "secret names"},
		{"a domain the allowlist lacks", `{"b.example":[{"transform":{"headers":{"X-A":"1"}}}]}`, []string{"a.example"}, errs.CodeInvalid, "add it to allowOut"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &e2bNetwork{Rules: json.RawMessage(tc.rules)}
			if tc.allow != nil {
				n.AllowOut, n.DenyOut = tc.allow, []string{allTraffic}
			}
			_, err := networkFor(true, n)
			if errs.CodeOf(err) != tc.code || !strings.Contains(errs.Public(err), tc.want) {
				t.Fatalf("err = %v (%s), want %s about %q", err, errs.CodeOf(err), tc.code, tc.want)
			}
		})
	}
}

// TestE2BValueRoundTrip: a value's placeholders go to Paddock's form and
// back unchanged.
func TestE2BValueRoundTrip(t *testing.T) {
	for _, v := range []string{"plain", "Bearer ${e2b.secrets.k}", "${e2b.secrets.A}${e2b.secrets.b}", "{not a ref}", "$x {y}"} {
		p, err := fromE2BValue(v)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if back := toE2BValue(p); back != v {
			t.Fatalf("%q → %q → %q", v, p, back)
		}
	}
}
