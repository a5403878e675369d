//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// restart closes e's server (sandboxes keep running) and opens a new one
// on the same data directory.
func restart(t *testing.T, e *testenv.Env) *testenv.Env {
	t.Helper()
	e.Server.Close()
	_ = e.Manager.Close(context.Background())
	e.Manager = nil
	e.Shutdown()
	return testenv.New(t, testenv.Options{DataDir: e.Data, CgroupPrefix: e.Prefix, UIDBase: e.UIDBase})
}

func mustSh(t *testing.T, e *testenv.Env, id, script string) string {
	t.Helper()
	return mustShAs(t, e, id, "", script)
}

func mustShAs(t *testing.T, e *testenv.Env, id, user, script string) string {
	t.Helper()
	r, err := e.Client.Exec(context.Background(), id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}, User: user})
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	if r.ExitCode != 0 {
		t.Fatalf("%s: exit %d, stdout %q, stderr %q", script, r.ExitCode, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// The peer's "files lost after the second resume" bug, as a test: write,
// snapshot, delete the sandbox, restart the server, create from the
// snapshot — three times over, each cycle adding to what the last kept.
func TestSnapshotRestoreCycles(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{TimeoutS: 600})
	// A template file deleted (a whiteout), a directory replaced (opaque),
	// a symlink, a mode, an owner: the kinds of change an upper layer holds.
	mustShAs(t, e, sb.ID, "root", `rm /etc/issue && rm -rf /usr/share/doc && mkdir -p /usr/share/doc && echo new > /usr/share/doc/only &&
		ln -s /workspace/f0 /workspace/link && echo cycle0 > /workspace/f0 && chmod 0751 /workspace/f0`)
	mustShAs(t, e, sb.ID, "user", "mkdir -p /home/user/d && echo mine > /home/user/d/m")
	for cycle := 1; cycle <= 3; cycle++ {
		name := fmt.Sprintf("cycle-%d", cycle)
		snap, err := e.Manager.CreateSnapshot(ctx, e.Scope, sb.ID, name)
		if err != nil {
			t.Fatalf("cycle %d: snapshot: %v", cycle, err)
		}
		if snap.Files == 0 || snap.Bytes == 0 || snap.Source != sb.ID {
			t.Fatalf("cycle %d: snapshot %+v", cycle, snap)
		}
		if err := e.Manager.Delete(ctx, e.Scope, sb.ID); err != nil {
			t.Fatal(err)
		}
		e = restart(t, e)
		sb = e.Create(sandbox.Spec{TimeoutS: 600, Snapshot: name})
		if sb.Spec.Snapshot != name {
			t.Fatalf("spec %+v", sb.Spec)
		}
		var want strings.Builder
		for i := 0; i < cycle; i++ {
			fmt.Fprintf(&want, "cycle%d\n", i)
		}
		got := mustSh(t, e, sb.ID, `cat /workspace/f*; stat -c '%a %U' /workspace/f0 /home/user/d/m; readlink /workspace/link;
			test ! -e /etc/issue && echo issue-gone; ls /usr/share/doc`)
		wantAll := want.String() + "751 root\n644 user\n/workspace/f0\nissue-gone\nonly\n"
		if got != wantAll {
			t.Fatalf("cycle %d: sandbox from snapshot has\n%q\nwant\n%q", cycle, got, wantAll)
		}
		mustSh(t, e, sb.ID, fmt.Sprintf("echo cycle%d > /workspace/f%d", cycle, cycle))
	}
	list, err := e.Manager.ListSnapshots(ctx, e.Scope)
	if err != nil || len(list) != 3 {
		t.Fatalf("list: %+v %v", list, err)
	}
}

func TestSnapshotBadInput(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{TimeoutS: 600})
	for _, name := range []string{"", "a/b", "..", "a..b", "../x", "x\x00", "x\ny", "\x7f", ".hidden", strings.Repeat("a", 64)} {
		if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, sb.ID, name); errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("snapshot name %q: %v, want invalid_argument", name, err)
		}
	}
	if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, "sb-nonexistent", "ok"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("snapshot of an unknown sandbox: %v", err)
	}
	if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, sb.ID, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, sb.ID, "one"); errs.CodeOf(err) != errs.CodeConflict {
		t.Errorf("a second snapshot of the same name: %v", err)
	}
	if _, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Snapshot: "missing"}); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("create from a missing snapshot: %v", err)
	}
	if _, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Snapshot: "one", Template: "other"}); errs.CodeOf(err) != errs.CodeInvalid {
		t.Errorf("create from a snapshot with another template: %v", err)
	}
	if _, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{ForkOf: sb.ID}); errs.CodeOf(err) != errs.CodeInvalid {
		t.Errorf("create with fork_of: %v", err)
	}
	if err := e.Manager.DeleteSnapshot(ctx, e.Scope, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.GetSnapshot(ctx, e.Scope, "one"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("get of a deleted snapshot: %v", err)
	}
}

// Deleting a snapshot while a sandbox is being created from it: refused
// (409 conflict) while the create reads it, so the new sandbox gets every
// file; deleted once the create is done; and the sandbox keeps its files.
func TestDeleteSnapshotInUse(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	src := e.Create(sandbox.Spec{TimeoutS: 600, DiskMB: 256})
	mustSh(t, e, src.ID, "head -c 67108864 /dev/urandom > /workspace/big && sha256sum /workspace/big > /workspace/sum")
	if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, src.ID, "busy"); err != nil {
		t.Fatal(err)
	}
	type result struct {
		sb  sandbox.Sandbox
		err error
	}
	done := make(chan result, 1)
	go func() {
		sb, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{TimeoutS: 600, DiskMB: 256, Snapshot: "busy"})
		done <- result{sb, err}
	}()
	time.Sleep(20 * time.Millisecond)
	var conflicts int
	var deleted bool
	var res result
	for got := false; !got; {
		select {
		case res = <-done:
			got = true
		default:
			err := e.Manager.DeleteSnapshot(ctx, e.Scope, "busy")
			switch {
			case errs.CodeOf(err) == errs.CodeConflict:
				conflicts++
			case err == nil:
				deleted = true
			}
			if deleted {
				res, got = <-done, true
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if res.err != nil {
		t.Fatalf("create from the snapshot (%d conflicts, deleted %v): %v", conflicts, deleted, res.err)
	}
	if conflicts == 0 {
		t.Fatalf("no delete was refused while the create read the snapshot (deleted %v)", deleted)
	}
	if !deleted {
		if err := e.Manager.DeleteSnapshot(ctx, e.Scope, "busy"); err != nil {
			t.Fatalf("delete once the create is done: %v", err)
		}
	}
	if out := mustSh(t, e, res.sb.ID, "sha256sum -c /workspace/sum"); !strings.Contains(out, "OK") {
		t.Fatalf("the restored file: %q", out)
	}
}

// A snapshot larger than the new sandbox's disk: a clear 400, no sandbox.
func TestSnapshotTooBigForDisk(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	src := e.Create(sandbox.Spec{TimeoutS: 600, DiskMB: 128})
	mustSh(t, e, src.ID, "head -c 67108864 /dev/zero > /workspace/big")
	if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, src.ID, "big"); err != nil {
		t.Fatal(err)
	}
	before, _ := e.Manager.List(ctx, e.Scope, nil)
	_, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{TimeoutS: 600, DiskMB: 32, Snapshot: "big"})
	if errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(errs.Public(err), "does not fit") {
		t.Fatalf("create from a snapshot over the disk: %v (%s)", err, errs.Public(err))
	}
	if after, _ := e.Manager.List(ctx, e.Scope, nil); len(after) != len(before) {
		t.Fatalf("a failed create left a sandbox: %d then %d", len(before), len(after))
	}
	// Positive control: with room, the same snapshot restores.
	if _, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{TimeoutS: 600, DiskMB: 128, Snapshot: "big"}); err != nil {
		t.Fatal(err)
	}
}

// Hard-linked files stay linked through a snapshot and a fork: stored and
// counted once, restored as one file with its names (a 32 MiB file with
// three names fits a 48 MiB disk only linked), writes through one name
// seen through the others.
func TestSnapshotHardLinks(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	src := e.Create(sandbox.Spec{TimeoutS: 600, DiskMB: 64})
	mustSh(t, e, src.ID, `head -c 33554432 /dev/urandom > /workspace/a && mkdir /workspace/d &&
		ln /workspace/a /workspace/b && ln /workspace/a /workspace/d/c`)
	linked := func(e *testenv.Env, id string) {
		t.Helper()
		got := strings.Fields(mustSh(t, e, id, "stat -c '%i:%h' /workspace/a /workspace/b /workspace/d/c"))
		if len(got) != 3 || got[0] != got[1] || got[0] != got[2] || !strings.HasSuffix(got[0], ":3") {
			t.Fatalf("sandbox %s: inode:links of the three names %q, want one inode with 3 links", id, got)
		}
		if out := mustSh(t, e, id, "echo more >> /workspace/d/c && tail -c 5 /workspace/a"); out != "more\n" {
			t.Fatalf("sandbox %s: a write through one name is not seen through another: %q", id, out)
		}
	}
	linked(e, src.ID) // positive control: linked in the source
	snap, err := e.Manager.CreateSnapshot(ctx, e.Scope, src.ID, "links")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Bytes < 32<<20 || snap.Bytes >= 33<<20 {
		t.Fatalf("snapshot of one 32 MiB file with 3 names holds %d bytes, want it once", snap.Bytes)
	}
	restored := e.Create(sandbox.Spec{TimeoutS: 600, DiskMB: 48, Snapshot: "links"})
	linked(e, restored.ID)
	forks, err := e.Manager.Fork(ctx, e.Scope, src.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	linked(e, forks[0].ID)
}

// A sandbox reattached after a server restart is snapshotted and forked
// as before it (its agent hands the new server the layer, which no path
// names any more on tmpfs-layer hosts): running or paused, and again
// after a second restart.
func TestSnapshotForkAfterRestart(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	t.Logf("tmpfs layers: %v", e.TmpfsLayers()) // which of the two ways back to the layer this run tests
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{TimeoutS: 600})
	mustSh(t, e, sb.ID, "echo kept > /workspace/f")
	asleep := e.Create(sandbox.Spec{TimeoutS: 600})
	mustSh(t, e, asleep.ID, "echo sleeper > /workspace/f")
	if _, err := e.Manager.Pause(ctx, e.Scope, asleep.ID); err != nil {
		t.Fatal(err)
	}
	has := func(e *testenv.Env, id, want string) {
		t.Helper()
		if got := mustSh(t, e, id, "cat /workspace/f"); got != want+"\n" {
			t.Fatalf("sandbox %s has %q, want %q", id, got, want)
		}
	}
	for round := 1; round <= 2; round++ {
		e = restart(t, e)
		name := fmt.Sprintf("after-restart-%d", round)
		if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, sb.ID, name); err != nil {
			t.Fatalf("restart %d: snapshot of a reattached sandbox: %v", round, err)
		}
		has(e, e.Create(sandbox.Spec{TimeoutS: 600, Snapshot: name}).ID, "kept")
		forks, err := e.Manager.Fork(ctx, e.Scope, sb.ID, 2)
		if err != nil {
			t.Fatalf("restart %d: fork of a reattached sandbox: %v", round, err)
		}
		for _, f := range forks {
			has(e, f.ID, "kept")
		}
		has(e, sb.ID, "kept") // the source runs on
	}
	// Reattached paused: captured as it is, and it stays paused.
	if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, asleep.ID, "asleep"); err != nil {
		t.Fatalf("snapshot of a sandbox reattached paused: %v", err)
	}
	if got := mustGet(t, e, asleep.ID); got.State != sandbox.StatePaused {
		t.Fatalf("the paused sandbox is %s after its snapshot", got.State)
	}
	has(e, e.Create(sandbox.Spec{TimeoutS: 600, Snapshot: "asleep"}).ID, "sleeper")
}
