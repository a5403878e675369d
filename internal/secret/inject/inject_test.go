package inject

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/wire"
)

type unit struct {
	dir     string
	db      *store.DB
	key     *secret.Key
	secrets *secret.Store
	cas     *CAStore
}

func newUnit(t *testing.T) *unit {
	t.Helper()
	u := &unit{dir: t.TempDir()}
	var err error
	if u.db, err = store.Open(u.dir, append(append([]store.Migration{}, secret.Migrations...), Migrations...)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.db.Close() })
	if u.key, err = secret.LoadKey(u.dir); err != nil {
		t.Fatal(err)
	}
	if u.secrets, err = secret.NewStore(secret.Options{DB: u.db.SQL(), Key: u.key}); err != nil {
		t.Fatal(err)
	}
	u.cas = NewCAStore(u.db.SQL(), u.key)
	return u
}

func (u *unit) addSandbox(t *testing.T, id, tpl string) {
	t.Helper()
	if err := u.db.PutSandbox(context.Background(), store.Sandbox{ID: id, Tenant: "acme", State: "running", Template: tpl,
		Spec: []byte("{}"), CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

func pool(ca *CA) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

func TestCA(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	const id = "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa"
	u.addSandbox(t, id, "host")
	ca, err := u.cas.Ensure(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Cert.PublicKeyAlgorithm != x509.ECDSA || !ca.Cert.IsCA || !ca.Cert.MaxPathLenZero {
		t.Fatalf("CA: %v IsCA=%v", ca.Cert.PublicKeyAlgorithm, ca.Cert.IsCA)
	}
	again, _ := u.cas.Ensure(ctx, id)
	if again != ca {
		t.Fatal("a second Ensure made another CA")
	}
	// What goes into the sandbox is the certificate alone.
	if strings.Contains(ca.PEM, "PRIVATE") || strings.Count(ca.PEM, "BEGIN") != 1 {
		t.Fatalf("CA PEM: %s", ca.PEM)
	}
	leaf, err := ca.Leaf("api.example.com", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "api.example.com", Roots: pool(ca)}); err != nil {
		t.Fatalf("leaf does not verify: %v", err)
	}
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "other.example.com", Roots: pool(ca)}); err == nil {
		t.Fatal("a leaf verifies for another name")
	}
	// Persisted, sealed: a new store (a restarted server) has the same CA,
	// and the database holds no private key in the clear.
	u.db.SQL().Exec("PRAGMA wal_checkpoint(FULL)")
	der, _ := x509.MarshalPKCS8PrivateKey(ca.key)
	for _, f := range []string{"paddock.db", "paddock.db-wal"} {
		if b, _ := os.ReadFile(filepath.Join(u.dir, f)); bytes.Contains(b, der) {
			t.Fatalf("%s holds the CA key in the clear", f)
		}
	}
	restarted := NewCAStore(u.db.SQL(), u.key)
	ca2, err := restarted.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	leaf2, err := ca2.Leaf("api.example.com", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf2.Leaf.Verify(x509.VerifyOptions{DNSName: "api.example.com", Roots: pool(ca)}); err != nil {
		t.Fatalf("after a restart, the leaf is not from the sandbox's CA: %v", err)
	}
	// Another key (or a row moved to another sandbox) does not open it.
	otherKey, _ := secret.NewKey(bytes.Repeat([]byte{1}, 32))
	if _, err := NewCAStore(u.db.SQL(), otherKey).Get(ctx, id); err == nil {
		t.Fatal("opened with another key")
	}
	// Swept once the sandbox is gone.
	if n, err := u.cas.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("sweep with the sandbox alive: %d %v", n, err)
	}
	if err := u.db.DeleteSandbox(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n, err := u.cas.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if _, err := u.cas.Get(ctx, id); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("after the sweep: %v", err)
	}
}

// fakeRules is a manager with one sandbox.
type fakeRules struct {
	id, tenant string
	rules      []secret.Rule
}

func (f *fakeRules) InjectRules(id string) (string, []secret.Rule, bool) {
	if id != f.id {
		return "", nil, false
	}
	return f.tenant, f.rules, true
}

func TestInterceptorPlan(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	const id = "sb-bbbbbbbbbbbbbbbbbbbbbbbbbb"
	u.addSandbox(t, id, "host")
	ca, _ := u.cas.Ensure(ctx, id)
	const value = "s3cr3t-value-for-the-test"
	if _, _, err := u.secrets.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "TOKEN", []byte(value), "api.example.com"); err != nil {
		t.Fatal(err)
	}
	rules, err := secret.NormalizeRules([]secret.Rule{{Host: "api.example.com", Header: "Authorization", Value: "Bearer {secret:TOKEN}"}})
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRules{id: id, tenant: "acme", rules: rules}
	var denied bool
	ic, err := NewInterceptor(InterceptorOptions{Rules: fr, Secrets: u.secrets, CAs: u.cas,
		Admit: func(context.Context, string, []string) error {
			if denied {
				return errs.New(errs.CodeForbidden, "tenant acme: secrets are not allowed (deny_secrets quota)")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	info := func(name string) egress.ConnInfo {
		return egress.ConnInfo{Sandbox: id, Name: name, Addr: netip.MustParseAddrPort("203.0.113.1:443"), Via: "transparent"}
	}
	// Hosts without a rule, other ports of the host (its SSH, say), and
	// unknown sandboxes are relayed untouched.
	port80 := info("api.example.com")
	port80.Addr = netip.MustParseAddrPort("203.0.113.1:80")
	for _, c := range []egress.ConnInfo{info("other.example.com"), port80,
		{Sandbox: "sb-unknown", Name: "api.example.com", Addr: netip.MustParseAddrPort("203.0.113.1:443")}} {
		if p, err := ic.Intercept(ctx, c); p != nil || err != nil {
			t.Fatalf("%+v: plan %v %v; want none", c, p, err)
		}
	}
	plan, err := ic.Intercept(ctx, info("api.example.com"))
	if err != nil || plan == nil {
		t.Fatalf("plan: %v %v", plan, err)
	}
	// Cleartext: no secret (anyone on the path could read it).
	req, _ := http.NewRequest("GET", "http://api.example.com/", nil)
	req.Header.Set("Authorization", "the sandbox's own")
	if err := plan.Request(req); err != nil || req.Header.Get("Authorization") != "the sandbox's own" {
		t.Fatalf("cleartext request: %v %q", err, req.Header.Get("Authorization"))
	}
	// The certificate the sandbox gets is from its CA, for the name.
	cert, err := plan.ServerTLS.GetCertificate(&tls.ClientHelloInfo{ServerName: "api.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: "api.example.com", Roots: pool(ca)}); err != nil {
		t.Fatal(err)
	}
	if err := plan.Request(req); err != nil || req.Header.Get("Authorization") != "Bearer "+value ||
		len(req.Header.Values("Authorization")) != 1 {
		t.Fatalf("TLS request: %v %q", err, req.Header.Values("Authorization"))
	}
	for _, m := range []string{"TRACE", "TRACK"} {
		trace, _ := http.NewRequest(m, "https://api.example.com/", nil)
		if err := plan.Request(trace); err == nil {
			t.Fatalf("%s (which echoes the headers back) was let through", m)
		}
	}
	// A secret deleted since: refused, the error names it, never a value.
	if err := u.secrets.Delete(ctx, rights.Scope{Rights: rights.All}, "acme", "TOKEN"); err != nil {
		t.Fatal(err)
	}
	if p, err := ic.Intercept(ctx, info("api.example.com")); p != nil || err == nil || !strings.Contains(err.Error(), "TOKEN") ||
		!strings.Contains(audit.RedactString(err.Error()), `"TOKEN"`) {
		t.Fatalf("deleted secret (the audit log must still tell which): %v %v", p, err)
	}
	u.secrets.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "TOKEN", []byte(value), "api.example.com")
	if p, err := ic.Intercept(ctx, info("api.example.com")); p == nil || err != nil {
		t.Fatalf("positive control: the secret set again: %v %v", p, err)
	}
	// Rebound elsewhere since the rule was admitted (secret exfiltration:
	// the binding, not the rule, decides): refused at the next connection.
	if _, err := u.secrets.Bind(ctx, rights.Scope{Rights: rights.All}, "acme", "TOKEN", []string{"other.example.com"}); err != nil {
		t.Fatal(err)
	}
	if p, err := ic.Intercept(ctx, info("api.example.com")); p != nil || err == nil || !strings.Contains(err.Error(), "may be sent only to other.example.com") {
		t.Fatalf("a secret no longer bound to the host: %v %v", p, err)
	}
	u.secrets.Bind(ctx, rights.Scope{Rights: rights.All}, "acme", "TOKEN", []string{"api.example.com"})
	denied = true
	if p, err := ic.Intercept(ctx, info("api.example.com")); p != nil || err == nil || !strings.Contains(err.Error(), "deny_secrets") {
		t.Fatalf("tenant denied secrets: %v %v", p, err)
	}
}

type fakeTemplates struct{ root string }

func (f fakeTemplates) Get(name string) (*template.Template, error) {
	if name != "host" {
		return nil, errs.NotFound("no template %s", name)
	}
	return &template.Template{Name: name, Root: f.root}, nil
}

func TestHook(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	const id = "sb-cccccccccccccccccccccccccc"
	u.addSandbox(t, id, "host")
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/ssl/certs"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"), []byte("-----TEMPLATE ROOTS-----"), 0o644)
	h := NewHook(u.cas, u.db, fakeTemplates{root}, nil)
	// No inject rules: no CA, nothing added.
	plain := runtime.NetSetup{Env: map[string]string{"HTTP_PROXY": "http://10.0.0.1:15001"}}
	if err := h.Setup(ctx, id, runtime.NetPolicy{Mode: "open"}, &plain); err != nil || len(plain.Files) != 0 || len(plain.Env) != 1 {
		t.Fatalf("without rules: %+v %v", plain, err)
	}
	if _, err := u.cas.Get(ctx, id); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("a CA was made for a sandbox without rules: %v", err)
	}
	withRules := runtime.NetPolicy{Mode: "open", Intercept: []string{"api.example.com"}}
	st := runtime.NetSetup{Env: map[string]string{"HTTP_PROXY": "http://10.0.0.1:15001"}}
	if err := h.Setup(ctx, id, withRules, &st); err != nil {
		t.Fatal(err)
	}
	ca, _ := u.cas.Get(ctx, id)
	if b := st.Files[BundlePath]; b != "-----TEMPLATE ROOTS-----\n"+ca.PEM {
		t.Fatalf("bundle: %q", b)
	}
	if st.Files[CAPath] != ca.PEM || st.Env["SSL_CERT_FILE"] != BundlePath || st.Env["REQUESTS_CA_BUNDLE"] != BundlePath ||
		st.Env["NODE_EXTRA_CA_CERTS"] != CAPath || st.Env["HTTP_PROXY"] == "" {
		t.Fatalf("setup: %+v", st)
	}
	allowed := map[string]bool{}
	for _, k := range runtime.NetEnvKeys {
		allowed[k] = true
	}
	for k := range st.Env {
		if !allowed[k] {
			t.Errorf("%s is not a network variable (runtime.NetEnvKeys)", k)
		}
	}
	if blk, _ := pem.Decode([]byte(st.Files[CAPath])); blk == nil || blk.Type != "CERTIFICATE" {
		t.Fatal("the CA file is not one certificate")
	}
	// A symlink in the template cannot pull a host file into the sandbox.
	os.Remove(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err := os.Symlink("/etc/shadow", filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")); err != nil {
		t.Fatal(err)
	}
	h2 := NewHook(u.cas, u.db, fakeTemplates{root}, nil)
	st2 := runtime.NetSetup{}
	if err := h2.Setup(ctx, id, withRules, &st2); err != nil {
		t.Fatal(err)
	}
	if st2.Files[BundlePath] != ca.PEM {
		t.Fatalf("a symlink out of the template was followed: %.60q", st2.Files[BundlePath])
	}
}

type recAdmission struct {
	called int
	ports  []int
}

func (r *recAdmission) Admit(context.Context, sandbox.Scope, string, *sandbox.Spec, func() []sandbox.Sandbox) (func(), error) {
	r.called++
	return func() {}, nil
}

func (r *recAdmission) AdmitSecrets(_ context.Context, tenant string, _ []string) error {
	if tenant == "locked" {
		return errs.New(errs.CodeForbidden, "tenant locked: secrets are not allowed (deny_secrets quota)")
	}
	return nil
}

func (r *recAdmission) AdmitExposedPorts(_ context.Context, _ string, ports []int) error {
	r.ports = ports
	return nil
}

func TestAdmission(t *testing.T) {
	ctx := context.Background()
	u := newUnit(t)
	u.secrets.Set(ctx, rights.Scope{Rights: rights.All}, "acme", "TOKEN", []byte("v"), "api.example.com")
	next := &recAdmission{}
	a := NewAdmission(next, u.secrets)
	spec := func(value string) *sandbox.Spec {
		return &sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"api.example.com"},
			Inject: []wire.InjectRule{{Host: "api.example.com", Header: "Authorization", Value: value}}}}
	}
	for _, tc := range []struct {
		tenant, op, value string
		code              errs.Code
		want              string
	}{
		{"acme", "create", "Bearer {secret:TOKEN}", "", ""},
		{"acme", "network", "Bearer {secret:TOKEN}", "", ""},
		{"acme", "create", "Bearer {secret:MISSING} {secret:TOKEN}", errs.CodeInvalid, "MISSING"},
		{"acme", "network", "{secret:MISSING}", errs.CodeInvalid, "do not exist"},
		{"acme", "create", "Bearer {secret:", errs.CodeInvalid, "unterminated"},
		{"other", "create", "{secret:TOKEN}", errs.CodeInvalid, "TOKEN"}, // another tenant's secret does not exist for it
		{"locked", "create", "{secret:TOKEN}", errs.CodeForbidden, "deny_secrets"},
		{"acme", "timeout", "{secret:MISSING}", "", ""}, // not a network decision
	} {
		before := next.called
		done, err := a.Admit(ctx, sandbox.Scope{Tenant: tc.tenant}, tc.op, spec(tc.value), nil)
		done()
		if tc.code == "" {
			if err != nil || next.called != before+1 {
				t.Errorf("%+v: %v (wrapped admission called %d)", tc, err, next.called-before)
			}
			continue
		}
		if errs.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
		if next.called != before {
			t.Errorf("%+v: the quota admission ran after a refusal", tc)
		}
	}
	if err := a.AdmitExposedPorts(ctx, "acme", []int{8080}); err != nil || len(next.ports) != 1 {
		t.Fatalf("ports check not forwarded: %v %v", err, next.ports)
	}
	if done, err := NewAdmission(nil, u.secrets).Admit(ctx, sandbox.Scope{Tenant: "acme"}, "create", &sandbox.Spec{}, nil); err != nil {
		t.Fatal(err)
	} else {
		done()
	}
}

func loadKeyForBench(dir string) (*secret.Key, error) { return secret.LoadKey(dir) }
