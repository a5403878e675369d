package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

// Fork with memory through the API: each fork continues the source's
// counter from the checkpoint, on its own (its writes unseen by the others
// and the source); the source keeps running; the fork tree is recorded.
// Native refuses with why.
func TestForkMemory(t *testing.T) {
	requireRunsc(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	src, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	startCounter(t, e.Client, src.ID)
	before := readCounter(t, e.Client, src.ID)
	forks, err := e.Client.ForkMemory(ctx, src.ID, 2)
	if err != nil || len(forks) != 2 {
		t.Fatalf("fork with memory: %v %v", forks, err)
	}
	time.Sleep(300 * time.Millisecond)
	for i, f := range forks {
		if f.ID == src.ID || f.Spec.ForkOf != src.ID || f.Spec.Runtime != "gvisor" {
			t.Fatalf("fork %d: %+v", i, f)
		}
		c1 := readCounter(t, e.Client, f.ID)
		time.Sleep(200 * time.Millisecond)
		if c2 := readCounter(t, e.Client, f.ID); c1 < before || c2 <= c1 {
			t.Fatalf("fork %d's counter: %d then %d, source was at %d when forked", i, c1, c2, before)
		}
	}
	if s1 := readCounter(t, e.Client, src.ID); s1 < before {
		t.Fatalf("the source restarted: %d < %d", s1, before)
	}
	if r, err := e.Client.Exec(ctx, forks[0].ID, client.ExecRequest{Cmd: []string{"sh", "-c", "echo mine > /tmp/f0"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("write: %+v %v", r, err)
	}
	for _, id := range []string{forks[1].ID, src.ID} {
		if r, err := e.Client.Exec(ctx, id, client.ExecRequest{Cmd: []string{"cat", "/tmp/f0"}}); err != nil || r.ExitCode == 0 {
			t.Fatalf("%s sees fork 0's file: %+v %v", id, r, err)
		}
	}
	got, err := e.Client.Get(ctx, src.ID)
	if err != nil || len(got.Forks) != 2 {
		t.Fatalf("fork tree: %+v %v", got.Forks, err)
	}
	n, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.ForkMemory(ctx, n.ID, 1); apiCode(err) != wire.CodeUnsupported || !strings.Contains(err.Error(), "Landlock") {
		t.Fatalf("fork with memory of a native sandbox: %v", err)
	}
}

// A memory snapshot through the API: listed with its image's size, a
// create from it continues the processes (twice: the snapshot stays),
// deleting it removes the image; native refuses with why.
func TestMemorySnapshot(t *testing.T) {
	requireRunsc(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	src, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	startCounter(t, e.Client, src.ID)
	before := readCounter(t, e.Client, src.ID)
	snap, err := e.Client.CreateMemorySnapshot(ctx, src.ID, "mem1")
	if err != nil || !snap.Memory || snap.MemoryBytes <= 0 {
		t.Fatalf("memory snapshot: %+v %v", snap, err)
	}
	list, err := e.Client.Snapshots(ctx)
	if err != nil || len(list) != 1 || !list[0].Memory || list[0].MemoryBytes != snap.MemoryBytes {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := e.Client.Delete(ctx, src.ID); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		sb, err := e.Client.Create(ctx, client.Spec{Snapshot: "mem1"})
		if err != nil {
			t.Fatalf("create %d from the memory snapshot: %v", i, err)
		}
		if sb.Spec.Runtime != "gvisor" {
			t.Fatalf("runtime of a create from a memory snapshot: %q", sb.Spec.Runtime)
		}
		c1 := readCounter(t, e.Client, sb.ID)
		time.Sleep(200 * time.Millisecond)
		if c2 := readCounter(t, e.Client, sb.ID); c1 < before || c2 <= c1 {
			t.Fatalf("create %d: counter %d then %d, %d at the snapshot", i, c1, c2, before)
		}
	}
	if _, err := e.Client.Create(ctx, client.Spec{Snapshot: "mem1", Runtime: "native"}); apiCode(err) != wire.CodeUnsupported {
		t.Fatalf("native create from a memory snapshot: %v", err)
	}
	if err := e.Client.DeleteSnapshot(ctx, "mem1"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(e.Data, "snapshots", "memory")); len(ents) > 0 {
		if imgs, _ := os.ReadDir(filepath.Join(e.Data, "snapshots", "memory", ents[0].Name())); len(imgs) > 0 {
			t.Fatalf("memory image left after delete: %v", imgs)
		}
	}
	n, err := e.Client.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.CreateMemorySnapshot(ctx, n.ID, "mem2"); apiCode(err) != wire.CodeUnsupported || !strings.Contains(err.Error(), "Landlock") {
		t.Fatalf("memory snapshot of a native sandbox: %v", err)
	}
}

// A memory snapshot counts against max_snapshot_mb: over it, refused with
// nothing kept (no snapshot, no image, no temporary); with room, taken.
func TestMemorySnapshotQuota(t *testing.T) {
	requireRunsc(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb, err := e.Client.Create(ctx, client.Spec{Runtime: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Quotas.Tenants().SetQuotas(ctx, e.Scope.Tenant, tenant.Quotas{MaxSnapshotMB: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.CreateMemorySnapshot(ctx, sb.ID, "big"); apiCode(err) != wire.CodeLimit || !strings.Contains(err.Error(), "max_snapshot_mb") {
		t.Fatalf("memory snapshot over the quota: %v", err)
	}
	if list, _ := e.Client.Snapshots(ctx); len(list) != 0 {
		t.Fatalf("a refused snapshot is listed: %+v", list)
	}
	for _, d := range []string{"tmp", "memory"} {
		var left []string
		_ = filepath.WalkDir(filepath.Join(e.Data, "snapshots", d), func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Fatalf("a refused memory snapshot left %v", left)
		}
	}
	// Positive control: with room it is taken, and the sandbox runs on.
	if _, err := e.Quotas.Tenants().SetQuotas(ctx, e.Scope.Tenant, tenant.Quotas{MaxSnapshotMB: 4096}); err != nil {
		t.Fatal(err)
	}
	s, err := e.Client.CreateMemorySnapshot(ctx, sb.ID, "big")
	if err != nil || s.MemoryBytes <= 1<<20 {
		t.Fatalf("memory snapshot with room: %+v %v", s, err)
	}
	if r, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"true"}}); err != nil || r.ExitCode != 0 {
		t.Fatalf("the source after the snapshot: %+v %v", r, err)
	}
}
