//go:build linux

package sandbox_test

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

func needVolumes(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("no mkfs.ext4 (e2fsprogs): volumes unavailable")
	}
}

func wantCode(t *testing.T, what string, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("%s: %v (code %s), want %s", what, err, errs.CodeOf(err), code)
	}
}

func shResult(t *testing.T, e *testenv.Env, id, user, script string) client.ExecResponse {
	t.Helper()
	r, err := e.Client.Exec(context.Background(), id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}, User: user})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A volume written by one sandbox is read by the next, across a server
// restart too; a read-only mount refuses writes; owners are the
// sandbox's own (id-mapped), whatever host uids each sandbox got.
func TestVolumeOutlivesSandboxes(t *testing.T) {
	needVolumes(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	v, err := e.Manager.CreateVolume(ctx, e.Scope, "shared", 32)
	if err != nil {
		t.Fatal(err)
	}
	if v.SizeMB != 32 || len(v.Attached) != 0 {
		t.Fatalf("volume %+v", v)
	}
	a := e.Create(sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "shared", Path: "/data"}}})
	mustShAs(t, e, a.ID, "user", "echo from-a > /data/note && mkdir /data/dir")
	if got, _ := e.Manager.GetVolume(ctx, e.Scope, "shared"); len(got.Attached) != 1 || got.Attached[0].Sandbox != a.ID || got.Attached[0].ReadOnly {
		t.Fatalf("attached %+v", got.Attached)
	}
	// setuid bits mean nothing through the mount (nosuid).
	if out := mustShAs(t, e, a.ID, "root", "grep ' /data ' /proc/mounts"); !strings.Contains(out, "nosuid") || !strings.Contains(out, "nodev") {
		t.Fatalf("mount options: %s", out)
	}
	if err := e.Manager.Delete(ctx, e.Scope, a.ID); err != nil {
		t.Fatal(err)
	}
	b := e.Create(sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "shared", Path: "/mnt/ro", ReadOnly: true}}})
	if out := mustSh(t, e, b.ID, "cat /mnt/ro/note; stat -c %u /mnt/ro/note"); out != "from-a\n1000\n" {
		t.Fatalf("sandbox b read %q", out)
	}
	r := shResult(t, e, b.ID, "root", "echo x > /mnt/ro/new")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "Read-only file system") {
		t.Fatalf("write to a read-only volume: %+v", r)
	}
	e = restart(t, e)
	if got, err := e.Manager.GetVolume(ctx, e.Scope, "shared"); err != nil || len(got.Attached) != 1 || got.Attached[0].Sandbox != b.ID {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	if out := mustSh(t, e, b.ID, "cat /mnt/ro/note"); out != "from-a\n" {
		t.Fatalf("reattached sandbox reads %q", out)
	}
	c := e.Create(sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "shared", Path: "/data"}}})
	if out := mustSh(t, e, c.ID, "cat /data/note"); out != "from-a\n" {
		t.Fatalf("after restart, a new sandbox reads %q", out)
	}
	// The files API without a sandbox: reads always; writes are refused
	// while a sandbox is the volume's writer.
	if b, err := e.Client.VolumeReadFile(ctx, "shared", "/note"); err != nil || string(b) != "from-a\n" {
		t.Fatalf("files API read %q %v", b, err)
	}
	_, err = e.Client.VolumeWriteFile(ctx, "shared", client.WriteRequest{Path: "/x"}, []byte("x"))
	wantCode(t, "files API write while a sandbox writes", err, errs.CodeConflict)
	wantCode(t, "delete while mounted", e.Client.DeleteVolume(ctx, "shared"), errs.CodeConflict)
	for _, id := range []string{b.ID, c.ID} {
		if err := e.Manager.Delete(ctx, e.Scope, id); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := e.Client.VolumeWriteFile(ctx, "shared", client.WriteRequest{Path: "/api/made", User: "user"}, []byte("by-api"))
	if err != nil || fi.UID != 1000 {
		t.Fatalf("files API write: %+v %v", fi, err)
	}
	list, err := e.Client.VolumeListFiles(ctx, "shared", "/", 0)
	if err != nil || len(list.Entries) != 3 {
		t.Fatalf("list: %+v %v", list, err)
	}
	d := e.Create(sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "shared", Path: "/data", ReadOnly: true}}})
	if out := mustShAs(t, e, d.ID, "user", "cat /data/api/made"); out != "by-api" {
		t.Fatalf("sandbox reads the API's file: %q", out)
	}
	if err := e.Manager.Delete(ctx, e.Scope, d.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.DeleteVolume(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"volume.create", "volume.delete", "volume.attach", "volume.detach"} {
		if len(e.AuditRecords(audit.Query{Action: k, Limit: 100})) == 0 {
			t.Errorf("no %s audit event", k)
		}
	}
}

// One writer at a time; any number of readers; a fork of a writer
// mounts the volume read-only.
func TestVolumeOneWriter(t *testing.T) {
	needVolumes(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Manager.CreateVolume(ctx, e.Scope, "w", 16); err != nil {
		t.Fatal(err)
	}
	rw := []sandbox.VolumeMount{{Name: "w", Path: "/data"}}
	ro := []sandbox.VolumeMount{{Name: "w", Path: "/data", ReadOnly: true}}
	a := e.Create(sandbox.Spec{Volumes: rw})
	_, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Volumes: rw})
	wantCode(t, "second writer", err, errs.CodeConflict)
	r1 := e.Create(sandbox.Spec{Volumes: ro})
	r2 := e.Create(sandbox.Spec{Volumes: ro})
	mustSh(t, e, a.ID, "echo w > /data/f")
	for _, id := range []string{r1.ID, r2.ID} {
		if out := mustSh(t, e, id, "cat /data/f"); out != "w\n" {
			t.Fatalf("reader sees %q", out)
		}
	}
	forks, err := e.Manager.Fork(ctx, e.Scope, a.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !forks[0].Spec.Volumes[0].ReadOnly {
		t.Fatalf("fork's volume: %+v", forks[0].Spec.Volumes)
	}
	if r := shResult(t, e, forks[0].ID, "", "echo x > /data/g"); r.ExitCode == 0 {
		t.Fatal("a fork wrote to its source's read-write volume")
	}
	// Once the writer is gone another may write.
	if err := e.Manager.Delete(ctx, e.Scope, a.ID); err != nil {
		t.Fatal(err)
	}
	b := e.Create(sandbox.Spec{Volumes: rw})
	mustSh(t, e, b.ID, "echo b >> /data/f")
}

// A sandbox that fills its volume gets ENOSPC; the host's disk gives
// nothing more (the image was reserved when the volume was made).
func TestVolumeFull(t *testing.T) {
	needVolumes(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Manager.CreateVolume(ctx, e.Scope, "small", 16); err != nil {
		t.Fatal(err)
	}
	sb := e.Create(sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "small", Path: "/data"}}})
	// The host's cost is the image's allocated blocks, reserved at
	// create: they must not grow (the disk's free space is shared with
	// everything else on the machine, so it proves nothing here).
	img := filepath.Join(e.Data, "volumes", "images", hex.EncodeToString([]byte(e.Scope.Tenant)), "small.img")
	var before, after unix.Stat_t
	if err := unix.Stat(img, &before); err != nil {
		t.Fatal(err)
	}
	r := shResult(t, e, sb.ID, "", "dd if=/dev/zero of=/data/fill bs=1M count=64 conv=fsync")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "No space left on device") {
		t.Fatalf("filling the volume: %+v", r)
	}
	if err := unix.Stat(img, &after); err != nil {
		t.Fatal(err)
	}
	if after.Blocks > before.Blocks || after.Size != 16<<20 {
		t.Fatalf("the image grew on the host: %d → %d blocks, size %d", before.Blocks, after.Blocks, after.Size)
	}
	// Its own layer still works.
	mustSh(t, e, sb.ID, "echo ok > /workspace/f")
	v, _ := e.Manager.GetVolume(ctx, e.Scope, "small")
	if v.UsedBytes < 12<<20 {
		t.Fatalf("used %d", v.UsedBytes)
	}
}

func TestVolumeBadInput(t *testing.T) {
	needVolumes(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Manager.CreateVolume(ctx, e.Scope, "v", 16); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/proc", "/proc/sys", "/dev", "/dev/shm", "/sys/x", "/", "relative", "/a/../b", "/a/./b",
		"/a/", "/etc", "/etc/hosts", "/etc/resolv.conf", "/a\x00b", "/a\nb", ""} {
		_, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "v", Path: p}}})
		wantCode(t, "path "+p, err, errs.CodeInvalid)
	}
	for _, vols := range [][]sandbox.VolumeMount{
		{{Name: "v", Path: "/a"}, {Name: "v", Path: "/b", ReadOnly: true}},
		{{Name: "../x", Path: "/a"}},
	} {
		_, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Volumes: vols})
		wantCode(t, "volumes", err, errs.CodeInvalid)
	}
	_, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "nope", Path: "/a"}}})
	wantCode(t, "unknown volume", err, errs.CodeNotFound)
	// Another tenant's volume does not exist for it: get, delete, files,
	// mount.
	tenants(t, e, "other")
	other := sandbox.Scope{Tenant: "other", Actor: "o", Rights: rights.All}
	_, err = e.Manager.GetVolume(ctx, other, "v")
	wantCode(t, "other tenant get", err, errs.CodeNotFound)
	wantCode(t, "other tenant delete", e.Manager.DeleteVolume(ctx, other, "v"), errs.CodeNotFound)
	_, err = e.Manager.VolumeReadFile(ctx, other, "v", "/x")
	wantCode(t, "other tenant read", err, errs.CodeNotFound)
	_, err = e.Manager.Create(ctx, other, sandbox.Spec{Volumes: []sandbox.VolumeMount{{Name: "v", Path: "/a"}}})
	wantCode(t, "other tenant mount", err, errs.CodeNotFound)
	if vs, _ := e.Manager.ListVolumes(ctx, other); len(vs) != 0 {
		t.Fatalf("other tenant lists %+v", vs)
	}
	for _, tc := range []struct {
		name string
		mb   int64
		code errs.Code
	}{{"v", 16, errs.CodeConflict}, {"a/b", 16, errs.CodeInvalid}, {"..", 16, errs.CodeInvalid},
		{"tiny", 1, errs.CodeInvalid}, {"huge", 1 << 31, errs.CodeInvalid}} {
		_, err := e.Manager.CreateVolume(ctx, e.Scope, tc.name, tc.mb)
		wantCode(t, "create "+tc.name, err, tc.code)
	}
	// Over the tenant's max_volume_mb (sizes summed): refused, nothing made.
	if _, err := e.Quotas.Tenants().Create(ctx, "capped", tenant.Quotas{MaxVolumeMB: 40}); err != nil {
		t.Fatal(err)
	}
	capped := sandbox.Scope{Tenant: "capped", Actor: "c", Rights: rights.All}
	if _, err := e.Manager.CreateVolume(ctx, capped, "one", 32); err != nil {
		t.Fatal(err)
	}
	_, err = e.Manager.CreateVolume(ctx, capped, "two", 16)
	wantCode(t, "over the volume quota", err, errs.CodeLimit)
	if vs, _ := e.Manager.ListVolumes(ctx, capped); len(vs) != 1 {
		t.Fatalf("over quota left %+v", vs)
	}
	// A symlink planted in the sandbox's own tree cannot aim a mount: a
	// snapshot carries /workspace/link -> /proc, and a volume at
	// /workspace/link/x is refused at setup.
	sb := e.Create(sandbox.Spec{})
	mustSh(t, e, sb.ID, "ln -s /proc /workspace/link")
	if _, err := e.Manager.CreateSnapshot(ctx, e.Scope, sb.ID, "linked"); err != nil {
		if errs.CodeOf(err) == errs.CodeUnsupported {
			t.Log("snapshots unsupported here; symlink case skipped")
			return
		}
		t.Fatal(err)
	}
	_, err = e.Manager.Create(ctx, e.Scope, sandbox.Spec{Snapshot: "linked", Volumes: []sandbox.VolumeMount{{Name: "v", Path: "/workspace/link/x"}}})
	wantCode(t, "a volume mounted through a symlink", err, errs.CodeInvalid)
	if !strings.Contains(errs.Public(err), "symlink") {
		t.Fatalf("the refusal does not say why: %s", errs.Public(err))
	}
	if v, _ := e.Manager.GetVolume(ctx, e.Scope, "v"); len(v.Attached) != 0 {
		t.Fatalf("a failed create left the volume attached: %+v", v.Attached)
	}
}

func needGVisorVolumes(t *testing.T) {
	t.Helper()
	needVolumes(t)
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("no runsc: %s", errs.Public(err))
	}
}

// volumeDataDir is where volume name's files are on the host.
func volumeDataDir(e *testenv.Env, name string) string {
	return filepath.Join(e.Data, "volumes", "mnt", hex.EncodeToString([]byte(e.Scope.Tenant)), name, "data")
}

// A volume on gVisor is the volume's own directory: what a gVisor sandbox
// writes (as root or its user) is in the volume — read through the files
// API and by native and gVisor sandboxes mounting it after or beside it —
// and survives the sandbox; a read-only mount refuses writes; the
// volume's size is the quota (ENOSPC, the image does not grow); the
// template's own trees (/usr of the host template) stay writable in the
// sandbox's layer and never reach the volume.
func TestVolumeOnGVisor(t *testing.T) {
	needGVisorVolumes(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Manager.CreateVolume(ctx, e.Scope, "gv", 16); err != nil {
		t.Fatal(err)
	}
	rw := []sandbox.VolumeMount{{Name: "gv", Path: "/data"}}
	ro := []sandbox.VolumeMount{{Name: "gv", Path: "/mnt/ro", ReadOnly: true}}
	a := e.Create(sandbox.Spec{Runtime: wire.RuntimeGVisor, Volumes: rw})
	mustShAs(t, e, a.ID, "user", "echo from-gvisor > /data/note && mkdir /data/dir && echo deep > /data/dir/f")
	mustShAs(t, e, a.ID, "root", "echo by-root > /data/root-file && echo mine > /usr/gv-layer-only")
	if out := mustSh(t, e, a.ID, "stat -c '%u %n' /data/note /data/root-file; cat /usr/gv-layer-only"); out != "1000 /data/note\n0 /data/root-file\nmine\n" {
		t.Fatalf("inside: %q", out)
	}
	// On the host: in the volume's directory, owned as inside; the
	// template tree's write is in the sandbox's layer, not in /usr.
	host := volumeDataDir(e, "gv")
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(host, "note"), &st); err != nil || st.Uid != 1000 {
		t.Fatalf("host sees %+v %v", st, err)
	}
	if err := unix.Stat("/usr/gv-layer-only", &st); err == nil {
		t.Fatal("a write to the template's /usr reached the host")
	}
	// Files API read while the sandbox writes; a gVisor reader and a
	// native reader beside the writer see its writes, later ones too
	// (volumes are shared-access mounts: no stale cache).
	if b, err := e.Client.VolumeReadFile(ctx, "gv", "/dir/f"); err != nil || string(b) != "deep\n" {
		t.Fatalf("files API read %q %v", b, err)
	}
	g := e.Create(sandbox.Spec{Runtime: wire.RuntimeGVisor, Volumes: ro})
	n := e.Create(sandbox.Spec{Runtime: wire.RuntimeNative, Volumes: ro})
	for _, id := range []string{g.ID, n.ID} {
		if out := mustSh(t, e, id, "cat /mnt/ro/note"); out != "from-gvisor\n" {
			t.Fatalf("reader %s sees %q", id, out)
		}
	}
	mustShAs(t, e, a.ID, "user", "echo later >> /data/note")
	for _, id := range []string{g.ID, n.ID} {
		if out := mustSh(t, e, id, "cat /mnt/ro/note"); out != "from-gvisor\nlater\n" {
			t.Fatalf("reader %s sees after the writer's append %q", id, out)
		}
	}
	r := shResult(t, e, g.ID, "root", "echo x > /mnt/ro/new")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "Read-only file system") {
		t.Fatalf("write to a read-only volume on gVisor: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(host, "new")); err == nil {
		t.Fatal("the read-only mount's write reached the volume")
	}
	// The quota: the volume's size, not the sandbox's disk limit.
	var before unix.Stat_t
	img := filepath.Join(e.Data, "volumes", "images", hex.EncodeToString([]byte(e.Scope.Tenant)), "gv.img")
	if err := unix.Stat(img, &before); err != nil {
		t.Fatal(err)
	}
	r = shResult(t, e, a.ID, "", "dd if=/dev/zero of=/data/fill bs=1M count=64 conv=fsync")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "No space left on device") {
		t.Fatalf("filling the volume on gVisor: %+v", r)
	}
	var after unix.Stat_t
	if err := unix.Stat(img, &after); err != nil || after.Blocks > before.Blocks || after.Size != 16<<20 {
		t.Fatalf("the image grew on the host: %d → %d blocks, size %d (%v)", before.Blocks, after.Blocks, after.Size, err)
	}
	if v, _ := e.Manager.GetVolume(ctx, e.Scope, "gv"); v.UsedBytes < 12<<20 {
		t.Fatalf("used %d after filling", v.UsedBytes)
	}
	mustSh(t, e, a.ID, "rm /data/fill && echo ok > /workspace/f")
	// Deleted, the writer's data stays; a new gVisor writer continues it.
	for _, id := range []string{a.ID, g.ID, n.ID} {
		if err := e.Manager.Delete(ctx, e.Scope, id); err != nil {
			t.Fatal(err)
		}
	}
	b := e.Create(sandbox.Spec{Runtime: wire.RuntimeGVisor, Volumes: rw})
	if out := mustShAs(t, e, b.ID, "user", "cat /data/note && echo again >> /data/note"); out != "from-gvisor\nlater\n" {
		t.Fatalf("the next gVisor sandbox reads %q", out)
	}
	if got, _ := e.Manager.GetVolume(ctx, e.Scope, "gv"); len(got.Attached) != 1 || got.Attached[0].Sandbox != b.ID {
		t.Fatalf("attached %+v", got.Attached)
	}
	if err := e.Manager.Delete(ctx, e.Scope, b.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Client.VolumeReadFile(ctx, "gv", "/note"); err != nil || string(got) != "from-gvisor\nlater\nagain\n" {
		t.Fatalf("after delete the files API reads %q %v", got, err)
	}
}

// A gVisor sandbox with volumes keeps no memory image: hibernate, a
// memory snapshot, a fork with memory and on_timeout: hibernate are
// refused, unsupported, saying why; the sandbox runs on with its volume,
// and a fork without memory mounts it read-only as on native.
func TestVolumeOnGVisorNoMemoryImage(t *testing.T) {
	needGVisorVolumes(t)
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	if _, err := e.Manager.CreateVolume(ctx, e.Scope, "gm", 16); err != nil {
		t.Fatal(err)
	}
	rw := []sandbox.VolumeMount{{Name: "gm", Path: "/data"}}
	_, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Runtime: wire.RuntimeGVisor, Volumes: rw, OnTimeout: wire.OnTimeoutHibernate})
	wantCode(t, "on_timeout hibernate with a volume", err, errs.CodeUnsupported)
	sb := e.Create(sandbox.Spec{Runtime: wire.RuntimeGVisor, Volumes: rw})
	mustSh(t, e, sb.ID, "echo before > /data/f")
	_, herr := e.Manager.Hibernate(ctx, e.Scope, sb.ID)
	_, serr := e.Manager.CreateSnapshotWith(ctx, e.Scope, sb.ID, "withmem", true)
	_, ferr := e.Manager.ForkWith(ctx, e.Scope, sb.ID, 1, true)
	for what, err := range map[string]error{"hibernate": herr, "memory snapshot": serr, "fork with memory": ferr} {
		wantCode(t, what, err, errs.CodeUnsupported)
		if msg := errs.Public(err); !strings.Contains(msg, "volumes") || !strings.Contains(msg, "faithful") {
			t.Errorf("%s: the refusal does not say why: %q", what, msg)
		}
	}
	if got, err := e.Manager.Get(ctx, e.Scope, sb.ID); err != nil || got.State != sandbox.StateRunning {
		t.Fatalf("after the refusals: %+v %v", got, err)
	}
	if out := mustSh(t, e, sb.ID, "cat /data/f && echo after >> /data/f && cat /data/f"); out != "before\nbefore\nafter\n" {
		t.Fatalf("volume after the refusals: %q", out)
	}
	if snaps, _ := e.Manager.ListSnapshots(ctx, e.Scope); len(snaps) != 0 {
		t.Fatalf("a refused snapshot was kept: %+v", snaps)
	}
}

// Hostile: a symlink a sandbox stores in a volume, aimed at a host file
// (absolute, and relative climbing out of the volume's directory), is
// followed inside the sandbox's own tree, never on the host: reading it
// does not show the host file, writing through it does not change it.
// Positive control: on the host the same link leads to the file.
func TestVolumeSymlinkEscape(t *testing.T) {
	needVolumes(t)
	rts := []string{wire.RuntimeNative}
	if _, err := gvisor.FindRunsc(""); err == nil {
		rts = append(rts, wire.RuntimeGVisor)
	} else {
		t.Logf("no runsc: native only (%s)", errs.Public(err))
	}
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	secret := filepath.Join(e.Data, "host-secret")
	const marker = "HOST-SECRET-7f3a"
	if err := os.WriteFile(secret, []byte(marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host := ""
	for i, rt := range rts {
		name := "ln" + strconv.Itoa(i)
		if _, err := e.Manager.CreateVolume(ctx, e.Scope, name, 16); err != nil {
			t.Fatal(err)
		}
		host = volumeDataDir(e, name)
		rel, err := filepath.Rel(host, secret)
		if err != nil {
			t.Fatal(err)
		}
		sb := e.Create(sandbox.Spec{Runtime: rt, Volumes: []sandbox.VolumeMount{{Name: name, Path: "/data"}}})
		mustSh(t, e, sb.ID, "ln -s "+secret+" /data/abs && ln -s "+rel+" /data/rel && ln -s / /data/root")
		for _, l := range []string{"abs", "rel"} {
			// Positive control: unsandboxed, the link is the way out.
			if b, err := os.ReadFile(filepath.Join(host, l)); err != nil || !strings.Contains(string(b), marker) {
				t.Fatalf("%s: the host does not follow %s to the secret (%q %v): the test proves nothing", rt, l, b, err)
			}
			r := shResult(t, e, sb.ID, "root", "cat /data/"+l+"; echo overwritten > /data/"+l)
			if strings.Contains(r.Stdout, marker) {
				t.Fatalf("%s: the sandbox read the host's file through /data/%s", rt, l)
			}
		}
		if r := shResult(t, e, sb.ID, "root", "cat /data/root"+secret); strings.Contains(r.Stdout, marker) {
			t.Fatalf("%s: the sandbox read the host's file through a link to /", rt)
		}
		if b, _ := os.ReadFile(secret); string(b) != marker+"\n" {
			t.Fatalf("%s: the host's file was changed through a link: %q", rt, b)
		}
		// The files API does not follow them out either.
		if b, err := e.Client.VolumeReadFile(ctx, name, "/abs"); err == nil && strings.Contains(string(b), marker) {
			t.Fatalf("%s: the files API read the host's file through a link", rt)
		}
		if err := e.Manager.Delete(ctx, e.Scope, sb.ID); err != nil {
			t.Fatal(err)
		}
	}
}
