package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

// healthRuntimes reads /healthz's runtimes by name, as a caller would.
func healthRuntimes(t *testing.T, e *testenv.Env) map[string]wire.RuntimeInfo {
	t.Helper()
	res, err := http.Get(e.Server.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h struct {
		Runtimes []wire.RuntimeInfo `json:"runtimes"`
	}
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	out := map[string]wire.RuntimeInfo{}
	for _, r := range h.Runtimes {
		out[r.Name] = r
	}
	return out
}

func apiCode(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

// runtime "gvisor" on the spec runs the sandbox in gVisor's kernel, through
// the REST API as a user calls it; the default stays native; /healthz
// lists both with runsc's version; an unknown runtime is refused.
func TestRuntimeChoice(t *testing.T) {
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	rts := healthRuntimes(t, e)
	if g := rts["gvisor"]; !g.Available || g.Version != gvisor.RunscVersion {
		t.Errorf("/healthz gvisor: %+v", g)
	}
	if n := rts["native"]; !n.Available {
		t.Errorf("/healthz native: %+v", n)
	}
	kernel := func(id string) string {
		t.Helper()
		r, err := e.Client.Exec(ctx, id, client.ExecRequest{Cmd: []string{"uname", "-r"}})
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("exec: %+v %v", r, err)
		}
		return strings.ToLower(r.Stdout)
	}
	g, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatalf("create gvisor: %v", err)
	}
	if g.Spec.Runtime != "gvisor" {
		t.Errorf("the sandbox reports runtime %q", g.Spec.Runtime)
	}
	// gVisor's kernel names itself in its release ("4.19.0-gvisor").
	if out := kernel(g.ID); !strings.Contains(out, "gvisor") {
		t.Errorf("a gvisor sandbox's kernel: %q", out)
	}
	// Positive control: a native sandbox sees the host's kernel.
	n, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatalf("create native: %v", err)
	}
	if out := kernel(n.ID); strings.Contains(out, "gvisor") {
		t.Errorf("a native sandbox's kernel: %q", out)
	}
	if err := e.Client.Delete(ctx, g.ID); err != nil {
		t.Fatalf("delete gvisor: %v", err)
	}
	if _, err := e.Client.Create(ctx, client.Spec{Runtime: "kata"}); apiCode(err) != wire.CodeInvalid {
		t.Fatalf("runtime kata: %v, want invalid_argument", err)
	}
}

// Without runsc the gVisor runtime is listed as unavailable with why, and
// a gvisor sandbox is refused with an unsupported error naming the
// command that installs it — no host path in it, nothing recorded.
func TestRuntimeGVisorUnavailable(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("PADDOCK_CACHE", cache) // where runsc is not
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	g := healthRuntimes(t, e)["gvisor"]
	if g.Available || !strings.Contains(g.Reason, "make deps") {
		t.Errorf("/healthz gvisor without runsc: %+v", g)
	}
	_, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if apiCode(err) != wire.CodeUnsupported || !strings.Contains(err.Error(), "make deps") || strings.Contains(err.Error(), cache) {
		t.Fatalf("create gvisor without runsc: %v", err)
	}
	if list, err := e.Client.List(ctx, nil); err != nil || len(list) != 0 {
		t.Fatalf("a refused create left %v (%v)", list, err)
	}
	// Positive control: native sandboxes still start.
	if _, err := e.Client.Create(ctx, client.Spec{}); err != nil {
		t.Fatal(err)
	}
}

// A gvisor sandbox outlives its server: the next one reattaches it with
// the gVisor runtime (the spec it persisted says which), its processes and
// files as they were, and deletes it with that runtime too.
func TestRuntimeGVisorReattach(t *testing.T) {
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	g, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := e.Client.Exec(ctx, g.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "echo kept > /workspace/f"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("write: %+v %v", r, err)
	}
	// A server exit: the API and the manager go, the sandbox stays.
	e.Server.Close()
	_ = e.Manager.Close(ctx)
	e.Manager = nil
	e.Shutdown()
	e2 := testenv.New(t, testenv.Options{DataDir: e.Data, CgroupPrefix: e.Prefix, UIDBase: e.UIDBase})
	r, err := e2.Client.Exec(ctx, g.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "cat /workspace/f; uname -r"}})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("exec after the restart: %+v %v", r, err)
	}
	if out := strings.ToLower(r.Stdout); !strings.HasPrefix(out, "kept\n") || !strings.Contains(out, "gvisor") {
		t.Fatalf("after the restart: %q, want the file and gVisor's kernel", r.Stdout)
	}
	if err := e2.Client.Delete(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Client.Get(ctx, g.ID); apiCode(err) != wire.CodeNotFound {
		t.Fatalf("after delete: %v", err)
	}
}

// --default-runtime gvisor gives a spec that names no runtime gVisor's
// kernel; a server that cannot run its default refuses to start.
func TestDefaultRuntimeGVisor(t *testing.T) {
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
	e := testenv.New(t, testenv.Options{DefaultRuntime: "gvisor", PoolSize: 1})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"uname", "-r"}})
	if err != nil || !strings.Contains(strings.ToLower(r.Stdout), "gvisor") || sb.Spec.Runtime != "gvisor" || sb.FromPool {
		t.Fatalf("a spec without runtime under --default-runtime gvisor: %+v %+v %v", sb, r, err)
	}
	// Positive control: native is still there by name.
	if n, err := e.Client.Create(ctx, client.Spec{Runtime: "native"}); err != nil || n.Spec.Runtime != "native" {
		t.Fatalf("native by name: %+v %v", n, err)
	}
}

// Refused before anything is opened (the data directory is not made).
func TestDefaultRuntimeUnavailable(t *testing.T) {
	t.Setenv("PADDOCK_CACHE", t.TempDir()) // where runsc is not
	dir := t.TempDir() + "/data"
	_, err := server.Open(context.Background(), server.Config{DataDir: dir, DefaultRuntime: "gvisor"})
	if err == nil || !strings.Contains(err.Error(), "--default-runtime gvisor: gVisor is not available on this server: runsc is not installed") {
		t.Fatalf("Open with an unavailable default runtime: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused configuration made its data directory (%v)", err)
	}
}

// A tenant can be required to use gVisor: its sandboxes that name no
// runtime get gVisor's kernel (even with a native warm pool), asking for
// native is refused naming the policy, and another tenant is untouched.
func TestTenantRequiresGVisor(t *testing.T) {
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
	e := testenv.New(t, testenv.Options{PoolSize: 1})
	ctx := context.Background()
	if _, err := e.Client.CreateTenant(ctx, "regulated", client.Quotas{Runtimes: []string{"gvisor"}}); err != nil {
		t.Fatal(err)
	}
	k, err := e.Client.CreateKey(ctx, client.KeyRequest{Tenant: "regulated", Scopes: []client.Scope{"read", "write", "exec"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := client.New(e.Server.URL, k.Key)
	kernel := func(c *client.Client, id string) string {
		t.Helper()
		r, err := c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"uname", "-r"}})
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("exec: %+v %v", r, err)
		}
		return strings.ToLower(r.Stdout)
	}
	sb, err := reg.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatalf("create in the regulated tenant: %v", err)
	}
	if sb.Spec.Runtime != "gvisor" || sb.FromPool || !strings.Contains(kernel(reg, sb.ID), "gvisor") {
		t.Fatalf("a regulated tenant's sandbox without a runtime: %+v", sb)
	}
	_, err = reg.Create(ctx, client.Spec{Runtime: "native"})
	if apiCode(err) != wire.CodeForbidden || !strings.Contains(err.Error(), `runtime "native" is not allowed (allowed: gvisor)`) {
		t.Fatalf("native in the regulated tenant: %v, want forbidden naming the policy", err)
	}
	// Positive control: the default tenant still gets native sandboxes.
	n, err := e.Client.Create(ctx, client.Spec{})
	if err != nil || n.Spec.Runtime == "gvisor" || strings.Contains(kernel(e.Client, n.ID), "gvisor") {
		t.Fatalf("the default tenant's sandbox: %+v %v", n, err)
	}
}
