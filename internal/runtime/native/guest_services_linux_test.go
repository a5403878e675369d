//go:build linux

package native_test

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// guestOf dials a sandbox's guest as a server does: a new client on its
// socket, knowing nothing of earlier ones.
func guestOf(t *testing.T, e *testenv.Env, id string) *guestapi.Client {
	t.Helper()
	c := guestapi.NewClient(filepath.Join(e.Data, "run", "sandboxes", id, "guest.sock"))
	t.Cleanup(c.Close)
	return c
}

// stopServer is a server exit: the API and the manager go, sandboxes stay.
func stopServer(t *testing.T, e *testenv.Env) {
	t.Helper()
	e.Server.Close()
	_ = e.Manager.Close(t.Context())
	e.Manager = nil
	e.Shutdown()
}

// TestGuestStateOutlivesTheServer: a process deadline is enforced by the
// guest while no server runs at all, and file metadata is on the file, so
// a restarted server finds both as they were left.
func TestGuestStateOutlivesTheServer(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := t.Context()
	g := guestOf(t, e, sb.ID)
	const deadline = 1500 * time.Millisecond
	timed, err := g.StartProcess(ctx, guestapi.ProcessStartRequest{Argv: []string{"sleep", "600"}, TimeoutMs: deadline.Milliseconds()})
	if err != nil {
		t.Fatal(err)
	}
	if timed.Deadline == nil || timed.Deadline.Before(timed.StartedAt) {
		t.Fatalf("no deadline reported: %+v", timed)
	}
	// The positive control: the same process without a deadline lives on.
	control, err := g.StartProcess(ctx, guestapi.ProcessStartRequest{Argv: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string]string{"owner": "agent", "step": "3"}
	if _, err := g.WriteFile(ctx, guestapi.WriteRequest{Path: "notes.txt", Metadata: kv, MetadataNamespace: "e2b"},
		strings.NewReader("hello\n"), 6); err != nil {
		t.Fatal(err)
	}
	stopServer(t, e)
	time.Sleep(deadline + time.Second) // no server runs while the deadline passes
	restarted := time.Now()

	e2 := testenv.New(t, testenv.Options{DataDir: e.Data, CgroupPrefix: e.Prefix, UIDBase: e.UIDBase})
	g2 := guestOf(t, e2, sb.ID)
	info, err := g2.Process(ctx, timed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != guestapi.ProcExited || !info.TimedOut || info.Signal != "SIGKILL" || info.EndedAt == nil {
		t.Fatalf("the process with a deadline: %+v", info)
	}
	if ran := info.EndedAt.Sub(info.StartedAt); ran < deadline || info.EndedAt.After(restarted) {
		t.Fatalf("killed after %v, at %v (server back at %v)", ran, info.EndedAt, restarted)
	}
	if c, err := g2.Process(ctx, control.ID); err != nil || c.State != guestapi.ProcRunning || c.TimedOut || c.Deadline != nil {
		t.Fatalf("the control process: %+v %v", c, err)
	}
	// A deadline set later, through the new server, holds too.
	if c, err := g2.SetProcessDeadline(ctx, control.ID, 100*time.Millisecond); err != nil || c.Deadline == nil {
		t.Fatalf("set deadline: %+v %v", c, err)
	}
	c, err := g2.WaitProcess(ctx, control.ID, 30*time.Second)
	if err != nil || c.State != guestapi.ProcExited || !c.TimedOut {
		t.Fatalf("after its new deadline: %+v %v", c, err)
	}
	if _, err := g2.SetProcessDeadline(ctx, control.ID, time.Second); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("a deadline on an exited process: %v", err)
	}
	fi, err := g2.Stat(ctx, guestapi.StatRequest{Path: "notes.txt", Metadata: "e2b"})
	if err != nil || !maps.Equal(fi.Metadata, kv) {
		t.Fatalf("metadata after the restart: %v %v", fi.Metadata, err)
	}
}

// TestMetadataIsExtendedAttributes: in a sandbox, on its writable layer
// (tmpfs or the quota'd store, whichever this host has) and on a file of
// the template (copied up), metadata is user.<ns>.* attributes that
// getfattr and setfattr see and set from inside.
func TestMetadataIsExtendedAttributes(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	t.Logf("writable layers: tmpfs=%v", e.TmpfsLayers())
	sb := e.Create(sandbox.Spec{})
	if r := e.Sh(sb.ID, "command -v getfattr && command -v setfattr"); r.ExitCode != 0 {
		t.Skip("the template has no getfattr/setfattr (Debian: attr)")
	}
	ctx := t.Context()
	g := guestOf(t, e, sb.ID)
	if _, err := g.WriteFile(ctx, guestapi.WriteRequest{Path: "f", Metadata: map[string]string{"k": "from-api"}, MetadataNamespace: "e2b"},
		strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if r := e.Sh(sb.ID, "getfattr --only-values -n user.e2b.k /workspace/f"); r.ExitCode != 0 || r.Stdout != "from-api" {
		t.Fatalf("getfattr inside: %+v", r)
	}
	if r := e.Sh(sb.ID, "setfattr -n user.e2b.inside -v yes /workspace/f && setfattr -n user.e2b.t -v 1 /etc/os-release"); r.ExitCode != 0 {
		t.Fatalf("setfattr inside: %+v", r)
	}
	fi, err := g.Stat(ctx, guestapi.StatRequest{Path: "f", Metadata: "e2b"})
	if err != nil || !maps.Equal(fi.Metadata, map[string]string{"k": "from-api", "inside": "yes"}) {
		t.Fatalf("stat: %v %v", fi.Metadata, err)
	}
	// A template file: the attribute is on its copy in the writable layer.
	fi, err = g.SetMetadata(ctx, guestapi.MetadataRequest{Path: "/etc/os-release", Namespace: "e2b", Metadata: map[string]string{"t": "2"}})
	if err != nil || fi.Metadata["t"] != "2" {
		t.Fatalf("template file: %v %v", fi.Metadata, err)
	}
	if r := e.Sh(sb.ID, "getfattr --only-values -n user.e2b.t /etc/os-release"); r.Stdout != "2" {
		t.Fatalf("getfattr of the template file: %+v", r)
	}
	// overlayfs's own attributes stay hidden and untouchable.
	if r := e.Sh(sb.ID, "getfattr -d -m - /workspace/f"); strings.Contains(r.Stdout, "overlay") {
		t.Fatalf("overlay attributes visible: %s", r.Stdout)
	}
}

// TestLineRangeRead: the guest reads the range; only it comes back.
func TestLineRangeRead(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	if r := e.Sh(sb.ID, "seq 1 100000 > /workspace/n"); r.ExitCode != 0 {
		t.Fatal(r.Stderr)
	}
	res, err := guestOf(t, e, sb.ID).ReadLines(t.Context(), guestapi.LinesRequest{Path: "n", Start: 50000, End: 50002})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "50000\n50001\n50002\n" || res.Total != 100000 || !res.More || res.Start != 50000 || res.End != 50002 {
		t.Fatalf("%+v", res)
	}
}
