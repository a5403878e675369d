//go:build linux

package inject_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/secret"
	"github.com/paddockhq/paddock/internal/secret/inject"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The secret of these tests: long and distinctive, so that finding any
// copy of it anywhere is unambiguous.
const secretValue = "pdksecret-9f3c1e77a2b94d0c8e5f61a3b7d2c4e8-do-not-leak"

// syncBuf collects log output.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// injectEnv is a real stack (testenv) whose sandboxes' network lives in
// the lab, with secret injection installed as paddock serve does it.
type injectEnv struct {
	*testenv.Env
	lab     *lab
	st      *network.Stack
	secrets *secret.Store
	cas     *inject.CAStore
	logs    *syncBuf
	mu      sync.Mutex
	dec     []egress.Decision
}

func newInjectEnv(t testing.TB, o ...testenv.Options) *injectEnv {
	t.Helper()
	testenv.RequireRoot(t)
	l := newLab(t, "Bearer "+secretValue)
	logs := &syncBuf{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ndb, err := store.Open(t.TempDir(), network.Migrations...)
	must(t, err)
	t.Cleanup(func() { ndb.Close() })
	st, err := network.New(context.Background(), network.Options{DB: ndb.SQL(), Log: log, HostNS: l.host.Path(),
		Upstreams: []netip.AddrPort{}, AllowCIDR: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
		Static: map[string][]netip.Addr{"api.test": {addrAPI}, "other.test": {addrOther}}})
	if err != nil {
		t.Fatalf("network stack: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	var eo testenv.Options
	if len(o) > 0 {
		eo = o[0]
	}
	eo.Network, eo.Log = st, log
	e := testenv.New(t, eo)
	ie := &injectEnv{Env: e, lab: l, st: st, logs: logs}
	mgr := network.Events(e.Manager)
	st.Egress().SetSink(egress.SinkFunc(func(ctx context.Context, d egress.Decision) {
		ie.mu.Lock()
		ie.dec = append(ie.dec, d)
		ie.mu.Unlock()
		mgr.Decision(ctx, d)
	}))
	// The secrets' tables are in the stack's own database (testenv's store
	// has serve's migrations): one handle, so that writes queue in Go
	// rather than in SQLite's busy waits.
	db := e.Store
	key, err := secret.LoadKey(e.Data)
	must(t, err)
	ie.secrets, err = secret.NewStore(secret.Options{DB: db.SQL(), Key: key, Admit: e.Quotas.AdmitSecrets})
	must(t, err)
	ie.cas = inject.NewCAStore(db.SQL(), key)
	ic, err := inject.NewInterceptor(inject.InterceptorOptions{Rules: e.Manager, Secrets: ie.secrets, CAs: ie.cas,
		Admit: e.Quotas.AdmitSecrets, UpstreamRoots: l.caPool, Log: log})
	must(t, err)
	st.SetSetupHook(inject.NewHook(ie.cas, db, e.Templates, log).Setup)
	st.Egress().SetInterceptor(ic)
	_, _, err = ie.secrets.Set(context.Background(), rights.Scope{Rights: rights.All}, e.Scope.Tenant, "API_TOKEN", []byte(secretValue), "api.test")
	must(t, err)
	return ie
}

// sh runs script in the sandbox with stdin.
func (ie *injectEnv) sh(t *testing.T, id, script, stdin string) (string, int) {
	t.Helper()
	r, err := ie.Client.Exec(context.Background(), id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}, Stdin: stdin})
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	return r.Stdout + r.Stderr, r.ExitCode
}

func (ie *injectEnv) decisions() []egress.Decision {
	ie.mu.Lock()
	defer ie.mu.Unlock()
	return append([]egress.Decision(nil), ie.dec...)
}

var injectSpec = sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"api.test", "other.test"},
	Inject: []wire.InjectRule{{Host: "api.test", Header: "Authorization", Value: "Bearer {secret:API_TOKEN}"}}}}

const (
	curlPx   = "curl -sS -m 10 "
	curlNoPx = "curl -sS -m 10 --noproxy '*' "
	pyGet    = `python3 -c 'import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' `
)

func TestSecretInjectedNeverInSandbox(t *testing.T) {
	ie := newInjectEnv(t)
	sb := ie.Create(injectSpec)
	// The secret arrives upstream: through the explicit proxy, the
	// transparent one, and from Python (SSL_CERT_FILE).
	for _, c := range []struct{ what, cmd string }{
		{"curl via HTTPS_PROXY", curlPx + "https://api.test/"},
		{"curl, transparent", curlNoPx + "https://api.test/"},
		{"python, transparent", pyGet + "https://api.test/"},
	} {
		out, code := ie.sh(t, sb.ID, c.cmd, "")
		if code != 0 || !strings.Contains(out, "api.test tls=true authorized") {
			t.Errorf("%s: exit %d: %s", c.what, code, out)
		}
		if strings.Contains(out, secretValue) {
			t.Fatalf("%s: the sandbox saw the secret", c.what)
		}
	}
	// The sandbox's own header is replaced, not added to.
	out, _ := ie.sh(t, sb.ID, curlNoPx+"-H 'Authorization: Bearer forged' https://api.test/", "")
	if !strings.Contains(out, " authorized") {
		t.Errorf("a sandbox-set Authorization: %s", out)
	}
	for _, s := range ie.lab.requests("api.test") {
		if s.TLS && s.Auth != "Bearer "+secretValue {
			t.Errorf("upstream got Authorization %q", s.Auth)
		}
	}
	// Cleartext to the same host: no secret (anyone on the path could
	// read it); positive control: the request did arrive.
	out, code := ie.sh(t, sb.ID, curlNoPx+"http://api.test/", "")
	if code != 0 || !strings.Contains(out, "api.test tls=false unauthorized") {
		t.Errorf("cleartext: exit %d: %s", code, out)
	}
	// Not an inject host: not intercepted, the sandbox sees the server's
	// own certificate (it verifies only against the lab's CA, which the
	// sandbox does not trust by default) and no header is added.
	if _, code := ie.sh(t, sb.ID, "cat > /tmp/lab-ca.pem", string(ie.lab.caPEM)); code != 0 {
		t.Fatal("copy the lab CA in")
	}
	out, code = ie.sh(t, sb.ID, curlNoPx+"--cacert /tmp/lab-ca.pem https://other.test/", "")
	if code != 0 || !strings.Contains(out, "other.test tls=true unauthorized") {
		t.Errorf("other.test with the lab CA (end-to-end TLS): exit %d: %s", code, out)
	}
	out, code = ie.sh(t, sb.ID, curlNoPx+"https://other.test/", "")
	t.Logf("other.test with the sandbox's bundle (refused as expected): %s", lastLine(out))
	if code == 0 {
		t.Errorf("other.test verified with the sandbox's bundle, so its TLS was terminated by the proxy: %s", out)
	}
	// ...whereas api.test with only the lab CA fails: that one is terminated.
	if out, code := ie.sh(t, sb.ID, curlNoPx+"--cacert /tmp/lab-ca.pem https://api.test/", ""); code == 0 {
		t.Errorf("api.test verified with the lab CA alone, so it was not intercepted: %s", out)
	}
	for _, s := range ie.lab.requests("other.test") {
		if s.Auth != "" {
			t.Errorf("other.test got Authorization %q", s.Auth)
		}
	}

	// Absent from the sandbox: its environment, every process's environ,
	// its files. The value goes in on stdin only (argv is audited).
	// Positive control first: the same search finds a planted copy.
	search := `V=$(cat); found=0
for f in /proc/[0-9]*/environ; do if grep -qaF -e "$V" "$f" 2>/dev/null; then echo "ENVIRON $f"; found=1; fi; done
n=$(ls /proc/[0-9]*/environ | wc -l); readable=0
for f in /proc/[0-9]*/environ; do if cat "$f" >/dev/null 2>&1; then readable=$((readable+1)); fi; done
echo "readable-environ=$readable/$n"
grep -rlaF -e "$V" --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr / 2>/dev/null | sed 's/^/FILE /'
find /usr -xdev -type f -newer /etc/hostname -print0 2>/dev/null | xargs -0 -r grep -laF -e "$V" 2>/dev/null | sed 's/^/FILE /'
env | grep -qaF -e "$V" && echo ENV
true`
	if _, code := ie.sh(t, sb.ID, "cat > /workspace/planted", secretValue); code != 0 {
		t.Fatal("plant")
	}
	out, _ = ie.sh(t, sb.ID, search, secretValue)
	if !strings.Contains(out, "FILE /workspace/planted") {
		t.Fatalf("positive control: the search did not find a planted copy:\n%s", out)
	}
	ie.sh(t, sb.ID, "rm /workspace/planted /tmp/lab-ca.pem", "")
	out, _ = ie.sh(t, sb.ID, search, secretValue)
	t.Logf("search for the secret in the sandbox: %s", strings.TrimSpace(out))
	if strings.Contains(out, "FILE ") || strings.Contains(out, "ENVIRON") || strings.Contains(out, "\nENV") {
		t.Errorf("the secret is inside the sandbox:\n%s", out)
	}
	if !strings.Contains(out, "readable-environ=") || strings.Contains(out, "readable-environ=0/") {
		t.Errorf("no process environment could be read, the search proves nothing:\n%s", out)
	}
	// From the host, where every process can be read (the guest's
	// environment cannot be from inside): no process on the machine has
	// the secret in its environment or its command line.
	pids, _ := filepath.Glob("/proc/[0-9]*")
	readable := 0
	for _, p := range pids {
		for _, f := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile(filepath.Join(p, f))
			if err != nil {
				continue
			}
			readable++
			if bytes.Contains(b, []byte(secretValue)) {
				t.Errorf("%s/%s holds the secret", p, f)
			}
		}
	}
	if readable < 10 {
		t.Errorf("only %d process files could be read from the host", readable)
	}
	// The CA is in the sandbox's bundle and announced; its key is not.
	out, _ = ie.sh(t, sb.ID, `echo "SSL_CERT_FILE=$SSL_CERT_FILE REQUESTS_CA_BUNDLE=$REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS"
grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt; grep -rl 'PRIVATE KEY' /etc/ssl 2>/dev/null; true`, "")
	ca, err := ie.cas.Get(context.Background(), sb.ID)
	must(t, err)
	if !strings.Contains(out, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt NODE_EXTRA_CA_CERTS=/etc/ssl/certs/paddock-egress-ca.pem") ||
		strings.Contains(out, "/etc/ssl/") && strings.Contains(out, "PRIVATE") {
		t.Errorf("CA announcement: %s", out)
	}
	bundle, _ := ie.sh(t, sb.ID, "cat /etc/ssl/certs/ca-certificates.crt", "")
	if !strings.Contains(bundle, strings.TrimSpace(ca.PEM)) || strings.Count(bundle, "BEGIN CERTIFICATE") < 2 {
		t.Errorf("the bundle does not hold the template's roots and the sandbox's CA (%d certificates)", strings.Count(bundle, "BEGIN CERTIFICATE"))
	}

	// Absent from the audit log and the server's log.
	ie.Manager.Delete(context.Background(), ie.Scope, sb.ID)
	recs := ie.AuditRecords(audit.Query{})
	if len(recs) == 0 {
		t.Fatal("positive control: the audit log is empty")
	}
	filepath.Walk(ie.AuditDir(), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(secretValue)) {
				t.Errorf("the audit log holds the secret: %s", p)
			}
		}
		return nil
	})
	if strings.Contains(ie.logs.String(), secretValue) {
		t.Error("the server's log holds the secret")
	}
	if !strings.Contains(ie.logs.String(), "injecting secrets") {
		t.Error("positive control: the debug log shows no interception at all")
	}
	found := false
	for _, d := range ie.decisions() {
		if strings.Contains(d.Reason, secretValue) {
			t.Errorf("a decision holds the secret: %+v", d)
		}
		found = found || d.Name == "api.test" && d.Allowed
	}
	if !found {
		t.Error("no allowed decision for api.test was reported")
	}
}

// TestInjectAddedAtRuntime: a sandbox without rules gets no CA; a policy
// change that adds a rule installs it and the secret flows; one that
// removes the rule stops the interception.
func TestInjectAddedAtRuntime(t *testing.T) {
	ie := newInjectEnv(t)
	sb := ie.Create(sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"api.test"}}})
	// Positive control of the interception: without a rule the sandbox
	// cannot verify api.test (the lab's CA is not in its bundle).
	if out, code := ie.sh(t, sb.ID, curlNoPx+"https://api.test/", ""); code == 0 {
		t.Fatalf("api.test verified without interception: %s", out)
	}
	if out, _ := ie.sh(t, sb.ID, `echo "[$SSL_CERT_FILE]"; ls /etc/ssl/certs/paddock-egress-ca.pem 2>&1; true`, ""); !strings.Contains(out, "[]") ||
		!strings.Contains(out, "No such file") {
		t.Errorf("a sandbox without inject rules got a CA: %s", out)
	}
	if _, err := ie.cas.Get(context.Background(), sb.ID); err == nil {
		t.Error("a CA was made for a sandbox without inject rules")
	}
	n := *injectSpec.Network
	n.Allow = []string{"api.test"}
	if _, err := ie.Manager.SetNetwork(context.Background(), ie.Scope, sb.ID, n); err != nil {
		t.Fatal(err)
	}
	if out, code := ie.sh(t, sb.ID, curlNoPx+"https://api.test/", ""); code != 0 || !strings.Contains(out, " authorized") {
		t.Fatalf("after adding the rule: exit %d: %s", code, out)
	}
	n.Inject = nil
	if _, err := ie.Manager.SetNetwork(context.Background(), ie.Scope, sb.ID, n); err != nil {
		t.Fatal(err)
	}
	if out, code := ie.sh(t, sb.ID, curlNoPx+"https://api.test/", ""); code == 0 {
		t.Fatalf("after removing the rule, still intercepted: %s", out)
	}
	if out, _ := ie.sh(t, sb.ID, `echo "[$SSL_CERT_FILE]"`, ""); !strings.Contains(out, "[]") {
		t.Errorf("after removing the rule the CA is still announced: %s", out)
	}
	// A secret deleted while the sandbox runs: its host is refused, the
	// request never goes out without it.
	n = *injectSpec.Network
	_, err := ie.Manager.SetNetwork(context.Background(), ie.Scope, sb.ID, n)
	must(t, err)
	before := len(ie.lab.requests("api.test"))
	must(t, ie.secrets.Delete(context.Background(), rights.Scope{Rights: rights.All}, ie.Scope.Tenant, "API_TOKEN"))
	if out, code := ie.sh(t, sb.ID, curlNoPx+"https://api.test/", ""); code == 0 {
		t.Fatalf("with the secret deleted: %s", out)
	}
	if got := ie.lab.requests("api.test"); len(got) != before {
		t.Fatalf("a request reached api.test without its secret: %+v", got[before:])
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestWarmPoolSandboxGetsCA: a sandbox claimed from the warm pool (made
// without network) gets its network, its CA and its secrets at the claim.
func TestWarmPoolSandboxGetsCA(t *testing.T) {
	ie := newInjectEnv(t, testenv.Options{PoolSize: 1})
	var sb sandbox.Sandbox
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ie.Manager.CountByState()["pooled"] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pool never filled")
		}
	}
	sb = ie.Create(injectSpec)
	if !sb.FromPool {
		t.Fatal("positive control: the sandbox did not come from the pool")
	}
	if out, code := ie.sh(t, sb.ID, curlNoPx+"https://api.test/", ""); code != 0 || !strings.Contains(out, " authorized") {
		t.Fatalf("a pooled sandbox: exit %d: %s", code, out)
	}
}

// BenchmarkCreateNetworked is what secret injection adds to creating a
// networked sandbox: "inject" has a rule (its CA is made, sealed and
// recorded, the template's bundle with the CA installed), "plain" has
// none (nothing to do). Run alternately, so that a change of the
// machine's load hits both.
//
//	go test -run XXX -bench CreateNetworked -benchtime 100x ./internal/secret/inject/
func BenchmarkCreateNetworked(b *testing.B) {
	ie := newInjectEnv(b)
	ctx := context.Background()
	plain := sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"api.test"}}}
	run := func(spec sandbox.Spec) func(b *testing.B) {
		return func(b *testing.B) {
			d := make([]time.Duration, 0, b.N)
			for range b.N {
				t0 := time.Now()
				sb, err := ie.Manager.Create(ctx, ie.Scope, spec)
				if err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t0))
				b.StopTimer()
				_ = ie.Manager.Delete(ctx, ie.Scope, sb.ID)
				b.StartTimer()
			}
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			b.ReportMetric(float64(d[len(d)/2])/1e6, "p50_ms")
		}
	}
	// The hook's own time inside the network attach, for the report.
	var hookTime time.Duration
	var hookCalls int
	var hmu sync.Mutex
	h := inject.NewHook(ie.cas, ie.Store, ie.Templates, nil)
	ie.st.SetSetupHook(func(ctx context.Context, id string, p runtime.NetPolicy, s *runtime.NetSetup) error {
		t0 := time.Now()
		err := h.Setup(ctx, id, p, s)
		hmu.Lock()
		hookTime += time.Since(t0)
		hookCalls++
		hmu.Unlock()
		return err
	})
	for i := range 3 {
		b.Run(fmt.Sprintf("inject-%d", i), run(injectSpec))
		b.Run(fmt.Sprintf("plain-%d", i), run(plain))
	}
	if hookCalls > 0 {
		b.Logf("setup hook: %d calls, mean %v", hookCalls, hookTime/time.Duration(hookCalls))
	}
}
