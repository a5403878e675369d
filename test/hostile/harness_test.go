//go:build linux

package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is one real stack (testenv: store, runtime, manager, REST API, audit
// log) plus a witness sandbox that proves the server still answers after
// an attack.
type env struct {
	*testenv.Env
	t       *testing.T
	witness string
}

func newEnv(t *testing.T, o testenv.Options) *env {
	t.Helper()
	if o.DefaultRuntime == "" {
		o.DefaultRuntime = suiteRuntime(t)
	}
	e := &env{Env: testenv.New(t, o), t: t}
	e.witness = e.sandbox(client.Spec{Labels: map[string]string{"role": "witness"}})
	return e
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sandbox creates a sandbox through the REST API.
func (e *env) sandbox(spec client.Spec) string {
	e.t.Helper()
	sb, err := e.Client.Create(ctxT(e.t, time.Minute), spec)
	if err != nil {
		e.t.Fatalf("create sandbox %+v: %v", spec, err)
	}
	return sb.ID
}

// exec runs req in sandbox id through the REST API.
func (e *env) exec(id string, req client.ExecRequest) client.ExecResponse {
	e.t.Helper()
	res, err := e.Client.Exec(ctxT(e.t, 2*time.Minute), id, req)
	if err != nil {
		e.t.Fatalf("exec %s in %s: %v", clipS(fmt.Sprintf("%q", req.Cmd)), id, err)
	}
	return res
}

// sh runs a shell script in sandbox id (as root of the sandbox, or user).
func (e *env) sh(id, user, script string) client.ExecResponse {
	e.t.Helper()
	return e.exec(id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}, User: user})
}

// stillServes proves that the server survived: /healthz answers, a fresh
// exec works in the witness sandbox and in every id given (the attacked
// sandbox, when it is expected to live on).
func (e *env) stillServes(ids ...string) {
	e.t.Helper()
	resp, err := http.Get(e.Server.URL + "/healthz")
	if err != nil {
		e.t.Fatalf("after the attack the server does not answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("after the attack /healthz answers %d", resp.StatusCode)
	}
	for _, id := range append([]string{e.witness}, ids...) {
		res, err := e.Client.Exec(ctxT(e.t, time.Minute), id, client.ExecRequest{Cmd: []string{"echo", "still-alive"}})
		if err != nil || res.ExitCode != 0 || res.Stdout != "still-alive\n" {
			e.t.Fatalf("after the attack a fresh exec in %s fails: %+v %v", id, res, err)
		}
	}
}

// records are the audit records matching q (each hash-checked by testenv).
func (e *env) records(q audit.Query) []audit.Record {
	e.t.Helper()
	return e.AuditRecords(q)
}

// audited asserts that the log holds a record matching q and pred (what
// names it in a failure), and returns the last one.
func (e *env) audited(what string, q audit.Query, pred func(audit.Record) bool) audit.Record {
	e.t.Helper()
	var found []audit.Record
	// Result records of API requests are written once the handler returns,
	// which may be just after the client has its answer (a WebSocket's
	// when its session ends): wait a little for them.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		for _, r := range e.records(q) {
			if pred == nil || pred(r) {
				found = append(found, r)
			}
		}
		if len(found) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(found) == 0 {
		var all []string
		for _, r := range e.records(audit.Query{Sandbox: q.Sandbox}) {
			all = append(all, fmt.Sprintf("%s/%s status=%d code=%q error=%q %s %s", r.Action, r.Phase, r.Status, r.Code, r.Error, r.Args, r.Result))
		}
		e.t.Fatalf("audit log has no record of %s (query %+v); the sandbox's records:\n%s", what, q, strings.Join(all, "\n"))
	}
	return found[len(found)-1]
}

// execAudited asserts that an exec in sandbox id whose argv contains
// marker has an intent and a result record, and returns the result.
func (e *env) execAudited(id, marker string) audit.Record {
	e.t.Helper()
	intent := e.audited("the exec intent of "+marker, audit.Query{Sandbox: id, Action: "exec"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte(marker))
	})
	return e.audited("the exec result of "+marker, audit.Query{Sandbox: id, Action: "exec"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Request == intent.Request && r.Seq > intent.Seq
	})
}

// httpAudited asserts that the log holds the API result of a request to
// route (a pattern such as "POST /v1/sandboxes") answered with status.
func (e *env) httpAudited(route string, status int) audit.Record {
	e.t.Helper()
	return e.audited(fmt.Sprintf("the API answer %d to %s", status, route), audit.Query{Action: audit.ActionHTTP}, func(r audit.Record) bool {
		_, pattern, _ := strings.Cut(route, " ")
		return r.Phase == audit.PhaseResult && r.Status == status && bytes.Contains(r.Result, []byte(`"route":"`+pattern+`"`))
	})
}

// resultField decodes one field of a record's result.
func resultField(r audit.Record, key string) any {
	var m map[string]any
	_ = json.Unmarshal(r.Result, &m)
	return m[key]
}

// ---- the probe: one hostile syscall, natively and in a sandbox ----

// probeReport is the probe's answer (test/hostile/probe).
type probeReport struct {
	Op     string `json:"op"`
	OK     bool   `json:"ok"`
	Errno  string `json:"errno"`
	Detail string `json:"detail"`
	Count  int    `json:"count"`
}

var probeBuild struct {
	once sync.Once
	path string
	bin  []byte
	err  error
}

// probeBinary builds test/hostile/probe once per test binary.
func probeBinary(t testing.TB) (string, []byte) {
	t.Helper()
	probeBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "pdkprobe")
		if err != nil {
			probeBuild.err = err
			return
		}
		p := filepath.Join(dir, "probe")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", p, "./probe")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			probeBuild.err = fmt.Errorf("go build ./probe: %v\n%s", err, out)
			return
		}
		probeBuild.path = p
		probeBuild.bin, probeBuild.err = os.ReadFile(p)
	})
	if probeBuild.err != nil {
		t.Fatal(probeBuild.err)
	}
	return probeBuild.path, probeBuild.bin
}

func parseProbe(t testing.TB, out string) probeReport {
	t.Helper()
	var r probeReport
	line := strings.TrimSpace(out)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("probe printed %q: %v", out, err)
	}
	return r
}

// native runs the probe as a child of the test (root, on the host): the
// positive control.
func native(t testing.TB, op string, args ...string) probeReport {
	t.Helper()
	p, _ := probeBinary(t)
	out, err := exec.Command(p, append([]string{op}, args...)...).Output()
	if err != nil {
		t.Fatalf("native probe %s: %v (%s)", op, err, out)
	}
	return parseProbe(t, string(out))
}

// probePath is where the probe lives inside a sandbox.
const probePath = "/workspace/.hostile-probe"

// installProbe uploads the probe into sandbox id through the files API.
func (e *env) installProbe(id string) {
	e.t.Helper()
	_, bin := probeBinary(e.t)
	if _, err := e.Client.WriteFile(ctxT(e.t, time.Minute), id, client.WriteRequest{Path: probePath, Mode: "0755"},
		bytes.NewReader(bin), int64(len(bin))); err != nil {
		e.t.Fatalf("upload the probe: %v", err)
	}
}

// probeIn runs the probe in sandbox id (installed first) as user ("" is
// the sandbox's root) and returns its report and the exec's answer. A
// probe killed before it could report returns a zero report.
func (e *env) probeIn(id, user, op string, args ...string) (probeReport, client.ExecResponse) {
	e.t.Helper()
	res := e.exec(id, client.ExecRequest{Cmd: append([]string{probePath, op}, args...), User: user})
	if res.ExitCode != 0 || res.Signal != "" {
		return probeReport{Op: op}, res
	}
	return parseProbe(e.t, res.Stdout), res
}

// probeCase is a kernel-level attack: the probe op, what it must do
// natively (the control), and how the sandbox must refuse it.
type probeCase struct {
	op   string
	args []string
	// nativeErrno: "" means the action must succeed natively; otherwise the
	// errno that proves the kernel evaluated it there.
	nativeErrno string
	// wantErrno is the sandbox's refusal; wantSignal instead: the process
	// is killed (seccomp's SIGSYS).
	wantErrno  string
	wantSignal string
	user       string // sandbox user ("": root of the sandbox)
}

// runProbeCase is the whole four-step proof for a probe case.
func runProbeCase(t *testing.T, c probeCase) {
	t.Helper()
	n := native(t, c.op, c.args...)
	switch {
	case c.nativeErrno == "" && !n.OK:
		t.Fatalf("positive control: %s natively failed (%s %s); the test proves nothing", c.op, n.Errno, n.Detail)
	case c.nativeErrno != "" && n.Errno != c.nativeErrno:
		t.Fatalf("positive control: %s natively gave %+v, want errno %s", c.op, n, c.nativeErrno)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.installProbe(id)
	r, res := e.probeIn(id, c.user, c.op, c.args...)
	switch {
	case c.wantSignal != "":
		if res.Signal != c.wantSignal {
			t.Fatalf("sandboxed %s: want the process killed by %s, got %+v (%+v)", c.op, c.wantSignal, res.ExecResult, r)
		}
	case r.OK:
		t.Fatalf("sandboxed %s SUCCEEDED: %+v", c.op, r)
	case r.Errno != c.wantErrno:
		t.Fatalf("sandboxed %s: want %s, got %+v (exec %+v %q)", c.op, c.wantErrno, r, res.ExecResult, res.Stderr)
	}
	t.Logf("native: %+v; sandboxed: %+v signal=%q", n, r, res.Signal)
	e.stillServes(id)
	e.execAudited(id, c.op)
}

// call sends one raw request with cred as the bearer (empty: none).
func call(t testing.TB, base, method, path, cred string, body io.Reader, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}
