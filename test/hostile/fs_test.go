//go:build linux

package hostile

// Group: filesystem escape. Through the files API (the guest resolves
// every path inside the sandbox's own root) and through exec.

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/testenv"
)

// canary is a host directory holding a secret file: what an escape would
// read or overwrite.
type canary struct {
	dir, file, secret string
}

func newCanary(t *testing.T) canary {
	t.Helper()
	dir, err := os.MkdirTemp("", "pdkcanary")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var b [12]byte
	_, _ = rand.Read(b[:])
	c := canary{dir: dir, file: filepath.Join(dir, "secret"), secret: "CANARY-" + hex.EncodeToString(b[:])}
	if err := os.WriteFile(c.file, []byte(c.secret), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// untouched asserts the canary still holds only its secret.
func (c canary) untouched(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(c.file)
	if err != nil || string(b) != c.secret {
		t.Fatalf("the host canary changed: %q %v", b, err)
	}
	ents, _ := os.ReadDir(c.dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("something was written into the host canary directory: %v", names)
	}
}

// apiError asserts err is an API error with code.
func apiError(t *testing.T, what string, err error, code string) *client.Error {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: want a %s refusal, got %v", what, code, err)
	}
	if ce.Code != code {
		t.Fatalf("%s: want %s, got %d %s %q", what, code, ce.Status, ce.Code, ce.Message)
	}
	return ce
}

// A path with ".." components through the files API (CVE-2018-1002200
// class): refused before anything is resolved.
func TestFSDotDotTraversal(t *testing.T) {
	c := newCanary(t)
	// Control: natively ".." walks out of a base directory.
	base := t.TempDir()
	rel := strings.Repeat("../", strings.Count(base, "/")) + strings.TrimPrefix(c.file, "/")
	if b, err := os.ReadFile(filepath.Join(base, "") + "/" + rel); err != nil || string(b) != c.secret {
		t.Fatalf("positive control: natively %s/%s did not reach the canary: %v", base, rel, err)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	_, err := e.Client.ReadFile(ctxT(t, time.Minute), id, "/workspace/"+rel)
	apiError(t, "read through ..", err, "invalid_argument")
	// The same, percent-encoded in the raw query.
	status, body := call(t, e.Server.URL, "GET", "/v1/sandboxes/"+id+"/files?path=/workspace/%2e%2e/%2e%2e/etc/passwd", e.AdminKey, nil)
	if status != 400 || strings.Contains(body, "root:") {
		t.Fatalf("percent-encoded ..: %d %s", status, body)
	}
	e.stillServes(id)
	e.httpAudited("GET /v1/sandboxes/{id}/files", 400)
}

// A symlink inside the sandbox pointing at a host file: the guest resolves
// it in the sandbox's root, where that path is the sandbox's own (absent).
func TestFSSymlinkToHostFile(t *testing.T) {
	c := newCanary(t)
	// Control: natively the same symlink reads the secret.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(c.file, link); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(link); err != nil || string(b) != c.secret {
		t.Fatalf("positive control: the native symlink did not reach the canary: %v", err)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.sh(id, "", "ln -s "+c.file+" /workspace/link")
	b, err := e.Client.ReadFile(ctxT(t, time.Minute), id, "/workspace/link")
	if bytes.Contains(b, []byte(c.secret)) {
		t.Fatal("the files API read the host file through a symlink")
	}
	apiError(t, "read through a symlink to a host path", err, "not_found")
	if r := e.sh(id, "", "cat /workspace/link"); strings.Contains(r.Stdout, c.secret) || r.ExitCode == 0 {
		t.Fatalf("exec read the host file through a symlink: %+v", r)
	}
	e.stillServes(id)
	e.audited("the file.read intent", audit.Query{Sandbox: id, Action: "file.read"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte("/workspace/link"))
	})
	e.audited("the failed file.read result", audit.Query{Sandbox: id, Action: "file.read"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && strings.Contains(r.Error, "no such file")
	})
	e.httpAudited("GET /v1/sandboxes/{id}/files", 404)
}

// A symlinked directory pointing at a host directory, written through by
// the files API: the write lands in the sandbox or nowhere.
func TestFSSymlinkDirWrite(t *testing.T) {
	c := newCanary(t)
	// Control: natively a write through the symlink lands in the host dir.
	ctrl := t.TempDir()
	if err := os.Symlink(c.dir, filepath.Join(ctrl, "d")); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(ctrl, "d", "control-write")
	if err := os.WriteFile(probe, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "control-write")); err != nil {
		t.Fatalf("positive control: the native write did not land in the host directory: %v", err)
	}
	os.Remove(filepath.Join(c.dir, "control-write"))
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.sh(id, "", "ln -s "+c.dir+" /workspace/d")
	_, err := e.Client.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: "/workspace/d/pwned"}, strings.NewReader("pwned"), 5)
	t.Logf("write through the symlinked directory: %v", err)
	// Whatever the answer, the host directory is untouched; with
	// parents=true the file lands in the sandbox's own copy of that path.
	if _, err := e.Client.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: "/workspace/d/pwned", Parents: true},
		strings.NewReader("pwned"), 5); err == nil {
		if r := e.sh(id, "", "cat "+c.dir+"/pwned"); r.Stdout != "pwned" {
			t.Fatalf("the write succeeded but is not in the sandbox's own %s: %+v", c.dir, r)
		}
	}
	c.untouched(t)
	e.stillServes(id)
	e.audited("the file.write intent", audit.Query{Sandbox: id, Action: "file.write"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte("/workspace/d/pwned"))
	})
}

// tarEntry is one member of a hand-made archive.
type tarEntry struct {
	name, link, body string
	typ              byte
	mode             int64
	major, minor     int64
}

func makeTar(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, en := range entries {
		h := &tar.Header{Name: en.name, Linkname: en.link, Typeflag: en.typ, Mode: en.mode, Size: int64(len(en.body)),
			Devmajor: en.major, Devminor: en.minor, ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(en.body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// nativeTarP extracts an archive with GNU tar -P (absolute names and ..
// kept, no symlink protection) into a fresh directory: the positive
// control of the archive cases. It returns that directory.
func nativeTarP(t *testing.T, archive []byte) string {
	t.Helper()
	dir := t.TempDir()
	a := filepath.Join(t.TempDir(), "a.tar")
	if err := os.WriteFile(a, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-P", "-xf", a, "-C", dir).CombinedOutput(); err != nil {
		t.Logf("native tar -P: %v %s", err, out)
	}
	return dir
}

// uploadRefused uploads archive into /workspace/x and asserts a refusal
// with code whose message names the bad entry.
func (e *env) uploadRefused(id string, archive []byte, code, entry string) {
	e.t.Helper()
	_, err := e.Client.UploadArchive(ctxT(e.t, time.Minute), id, client.ExtractRequest{Path: "/workspace/x"}, bytes.NewReader(archive), int64(len(archive)))
	ce := apiError(e.t, "hostile archive", err, code)
	if entry != "" && !strings.Contains(ce.Message, entry) {
		e.t.Errorf("the refusal does not name the entry %q: %q", entry, ce.Message)
	}
	// The manager's result records the refusal (its code is the guest's
	// classification; the API's answer is audited with the public code).
	e.audited("the refused archive upload", audit.Query{Sandbox: id, Action: "file.archive.upload"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Error != "" && strings.Contains(r.Error, entry)
	})
	e.httpAudited("POST /v1/sandboxes/{id}/files/archive", ce.Status)
}

// Tar-slip: a member named ../../… (CVE-2018-1002200, CVE-2007-4131).
func TestFSArchiveTarSlip(t *testing.T) {
	c := newCanary(t)
	slip := strings.Repeat("../", 12) + strings.TrimPrefix(c.dir, "/") + "/slipped"
	archive := makeTar(t, tarEntry{name: "ok.txt", body: "fine"}, tarEntry{name: slip, body: "pwned"})
	nativeTarP(t, archive)
	if _, err := os.Stat(filepath.Join(c.dir, "slipped")); err != nil {
		t.Fatalf("positive control: GNU tar -P did not write outside its directory: %v", err)
	}
	os.Remove(filepath.Join(c.dir, "slipped"))
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.uploadRefused(id, archive, "invalid_argument", "slipped")
	if r := e.sh(id, "", "find / -xdev -name slipped 2>/dev/null"); strings.TrimSpace(r.Stdout) != "" {
		t.Fatalf("the slipped member was written: %s", r.Stdout)
	}
	c.untouched(t)
	e.stillServes(id)
}

// A symlink member, then a file written through it (CVE-2021-32803,
// node-tar).
func TestFSArchiveSymlinkThenFile(t *testing.T) {
	c := newCanary(t)
	archive := makeTar(t, tarEntry{name: "l", typ: tar.TypeSymlink, link: c.dir}, tarEntry{name: "l/through", body: "pwned"})
	nativeTarP(t, archive)
	if _, err := os.Stat(filepath.Join(c.dir, "through")); err != nil {
		t.Fatalf("positive control: GNU tar -P did not write through the symlink: %v", err)
	}
	os.Remove(filepath.Join(c.dir, "through"))
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.sh(id, "", "mkdir -p "+c.dir) // the sandbox's own copy of the path: it must stay empty too
	e.uploadRefused(id, archive, "invalid_argument", "l/through")
	if r := e.sh(id, "", "ls -A "+c.dir); strings.TrimSpace(r.Stdout) != "" {
		t.Fatalf("the member was written through the symlink inside the sandbox: %s", r.Stdout)
	}
	c.untouched(t)
	e.stillServes(id)
}

// A hardlink member to a file outside the target: it would make that file
// writable through the new name.
func TestFSArchiveHardlinkOut(t *testing.T) {
	c := newCanary(t)
	archive := makeTar(t, tarEntry{name: "h", typ: tar.TypeLink, link: c.file})
	dir := nativeTarP(t, archive)
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "h"), &st); err != nil || st.Nlink < 2 {
		t.Fatalf("positive control: GNU tar -P did not hardlink the outside file: %v", err)
	}
	os.Remove(filepath.Join(dir, "h"))
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.uploadRefused(id, archive, "invalid_argument", "h")
	c.untouched(t)
	e.stillServes(id)
}

// A device node member (/dev/mem's numbers): a door to host devices.
func TestFSArchiveDeviceNode(t *testing.T) {
	archive := makeTar(t, tarEntry{name: "mem", typ: tar.TypeChar, major: 1, minor: 1, mode: 0o666})
	dir := nativeTarP(t, archive)
	if fi, err := os.Lstat(filepath.Join(dir, "mem")); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("positive control: tar as root did not create the device node: %v", err)
	}
	os.Remove(filepath.Join(dir, "mem"))
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.uploadRefused(id, archive, "invalid_argument", "mem")
	if r := e.sh(id, "", "ls -l /workspace/x/mem"); r.ExitCode == 0 {
		t.Fatalf("a device node was created: %s", r.Stdout)
	}
	e.stillServes(id)
}

// A working directory through a descriptor the agent holds,
// /proc/self/fd/N (CVE-2024-21626, runc: a leaked cgroup descriptor put
// the container's cwd in the host's filesystem). Every such cwd must be
// refused, for exec and for background processes.
func TestFSProcSelfFdWorkingDirectory(t *testing.T) {
	nativeOnly(t, "the case puts a host directory's descriptor in the guest agent's host process; under gVisor the agent is a task of gVisor's kernel, which holds no host descriptor it could hand on (the /proc/self/fd working directories of workloads are refused by the agent's user-space resolution, tested in internal/guest/openat2)")
	c := newCanary(t)
	// Control: natively a child holding a descriptor of a host directory
	// starts in that directory through /proc/self/fd/3.
	d, err := os.Open(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctrl := exec.Command("/bin/cat", "secret")
	ctrl.ExtraFiles = []*os.File{d}
	// (Go changes directory before it moves ExtraFiles into place: the
	// parent's number is the child's at that moment.)
	ctrl.Dir = fmt.Sprintf("/proc/self/fd/%d", d.Fd())
	if out, err := ctrl.Output(); err != nil || string(out) != c.secret {
		t.Fatalf("positive control: a native cwd of /proc/self/fd/3 did not reach the host directory: %q %v", out, err)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	// The agent's descriptors as the host sees them (directories among them
	// would put a workload outside its root).
	var dirs []string
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", e.guestPID(id)))
	for _, en := range ents {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", e.guestPID(id), en.Name())); err == nil {
			if fi, err := os.Stat(fmt.Sprintf("/proc/%d/fd/%s", e.guestPID(id), en.Name())); err == nil && fi.IsDir() {
				dirs = append(dirs, en.Name()+" -> "+target)
			}
		}
	}
	t.Logf("directory descriptors of the agent: %v", dirs)
	for _, cwd := range []string{"/proc/self/cwd", "/proc/self/root", "/proc/1/cwd", "/proc/1/root"} {
		if res, err := e.Client.Exec(ctxT(t, time.Minute), id, client.ExecRequest{Cmd: []string{"/bin/pwd"}, Cwd: cwd}); err == nil && res.ExitCode == 0 {
			t.Logf("cwd %s: %q (inside the sandbox's root: harmless)", cwd, res.Stdout)
		}
	}
	var escaped []string
	for fd := 0; fd < 32; fd++ {
		cwd := "/proc/self/fd/" + strconv.Itoa(fd)
		res, err := e.Client.Exec(ctxT(t, time.Minute), id, client.ExecRequest{Cmd: []string{"/bin/ls", "-a"}, Cwd: cwd})
		if err == nil {
			escaped = append(escaped, fmt.Sprintf("exec with cwd %s ran (exit %d): %q", cwd, res.ExitCode, clipS(res.Stdout)))
		}
		if p, err := e.Client.StartProcess(ctxT(t, time.Minute), id, client.ProcessRequest{Cmd: []string{"/bin/ls", "-a"}, Cwd: cwd}); err == nil {
			escaped = append(escaped, fmt.Sprintf("process with cwd %s started (%s)", cwd, p.ID))
		}
	}
	if len(escaped) > 0 {
		t.Errorf("a working directory through the agent's descriptors was accepted (CVE-2024-21626 class: "+
			"the workload's cwd is then outside its root):\n%s", strings.Join(escaped, "\n"))
	}
	c.untouched(t)
	e.stillServes(id)
	e.audited("a refused exec with a /proc/self/fd cwd", audit.Query{Sandbox: id, Action: "exec"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte("/proc/self/fd/"))
	})
}

func clipS(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Overwriting the guest agent's binary through /proc/1/exe (CVE-2019-5736,
// runc): the agent runs from a sealed memfd the sandbox cannot reopen for
// writing.
func TestFSOverwriteGuestBinary(t *testing.T) {
	nativeOnly(t, "the case finds the agent's sealed memfd through its host pid; under gVisor the agent binary is a read-only bind of the gofer, hidden under an empty tmpfs, and /proc/1/exe is gVisor's")
	// Control: natively, the CVE's technique — an O_PATH descriptor of a
	// process's binary, reopened for writing once it exited — overwrites the
	// binary.
	dir := t.TempDir()
	victimBin := filepath.Join(dir, "victim")
	copyFile(t, "/bin/sleep", victimBin)
	victim := exec.Command(victimBin, "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/exe", victim.Process.Pid), unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = victim.Process.Kill()
	_ = victim.Wait()
	w, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	if err != nil {
		t.Fatalf("positive control: reopening the exited process's binary for writing failed natively: %v", err)
	}
	_, werr := unix.Pwrite(w, []byte("PWNED"), 0)
	unix.Close(w)
	if b, _ := os.ReadFile(victimBin); werr != nil || !bytes.HasPrefix(b, []byte("PWNED")) {
		t.Fatalf("positive control: the native write did not land: %v", werr)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	guest := fmt.Sprintf("/proc/%d/exe", e.guestPID(id))
	before := fileHash(t, guest)
	e.installProbe(id)
	for _, user := range []string{"", "user"} {
		r, res := e.probeIn(id, user, "exewrite", "1")
		if r.OK {
			t.Fatalf("sandboxed (user %q): the guest binary was reopened for writing: %+v", user, r)
		}
		t.Logf("sandboxed exewrite as %q: %+v (exit %d)", user, r, res.ExitCode)
	}
	if r := e.sh(id, "", "echo x >> /proc/1/exe; echo rc=$?"); !strings.Contains(r.Stdout, "rc=") || strings.Contains(r.Stdout, "rc=0") {
		t.Fatalf("appending to /proc/1/exe: %+v", r)
	}
	if after := fileHash(t, guest); after != before {
		t.Fatal("the guest binary changed")
	}
	e.stillServes(id)
	e.execAudited(id, "exewrite")
}

func fileHash(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Kernel triggers under /proc: /proc/sysrq-trigger (one byte crashes or
// reboots the host; the control writes the harmless 'h', help to the
// kernel log) where the kernel has it, and always
// /proc/sys/kernel/poweroff_cmd, a program the kernel runs as host root
// (the control writes its own value back).
func TestFSKernelTriggers(t *testing.T) {
	type target struct{ path, control, attack string }
	var targets []target
	if _, err := os.Stat("/proc/sysrq-trigger"); err == nil {
		targets = append(targets, target{"/proc/sysrq-trigger", "h", "h"})
	} else {
		t.Logf("this kernel has no /proc/sysrq-trigger (CONFIG_MAGIC_SYSRQ off)")
	}
	b, err := os.ReadFile("/proc/sys/kernel/poweroff_cmd")
	if err != nil {
		t.Fatal(err)
	}
	orig := strings.TrimSpace(string(b))
	targets = append(targets, target{"/proc/sys/kernel/poweroff_cmd", orig, "/workspace/pwn"})
	for _, tg := range targets {
		if n := native(t, "write", tg.path, tg.control); !n.OK {
			t.Fatalf("positive control: natively writing %s failed: %+v", tg.path, n)
		}
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.installProbe(id)
	for _, tg := range targets {
		r, _ := e.probeIn(id, "", "write", tg.path, tg.attack)
		if r.OK {
			t.Fatalf("sandboxed write to %s succeeded: %+v", tg.path, r)
		}
		t.Logf("sandboxed write to %s: %+v", tg.path, r)
	}
	if b, _ := os.ReadFile("/proc/sys/kernel/poweroff_cmd"); strings.TrimSpace(string(b)) != orig {
		t.Fatalf("the host's poweroff_cmd changed: %q", b)
	}
	e.stillServes(id)
	e.execAudited(id, "poweroff_cmd")
}

// core_pattern: a "|program" there runs as host root when anything dumps
// core — the privileged-container escape.
func TestFSCorePattern(t *testing.T) {
	const p = "/proc/sys/kernel/core_pattern"
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Control: natively root can write it (the same value back).
	if n := native(t, "write", p, strings.TrimSpace(string(orig))); !n.OK {
		t.Fatalf("positive control: natively writing core_pattern failed: %+v", n)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	e.installProbe(id)
	r, _ := e.probeIn(id, "", "write", p, "|/workspace/pwn")
	if r.OK {
		t.Fatalf("sandboxed write to core_pattern succeeded: %+v", r)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, orig) {
		t.Fatalf("the host's core_pattern changed: %q", now)
	}
	t.Logf("sandboxed: %+v", r)
	e.stillServes(id)
	e.execAudited(id, "core_pattern")
}

// The same write through the files API, which acts with the agent's
// privileges: refused as a read-only area.
func TestFSWriteProcThroughFilesAPI(t *testing.T) {
	const p = "/proc/sys/kernel/core_pattern"
	orig, _ := os.ReadFile(p)
	if n := native(t, "write", p, strings.TrimSpace(string(orig))); !n.OK {
		t.Fatalf("positive control: natively writing core_pattern failed: %+v", n)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	_, err := e.Client.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: p}, strings.NewReader("|/workspace/pwn"), 15)
	apiError(t, "files API write to core_pattern", err, "forbidden")
	if now, _ := os.ReadFile(p); !bytes.Equal(now, orig) {
		t.Fatalf("the host's core_pattern changed: %q", now)
	}
	e.stillServes(id)
	e.httpAudited("PUT /v1/sandboxes/{id}/files", 403)
}

// Writing one's own memory through /proc/self/mem (CVE-2012-0056 class).
// The sandbox's /proc is a read-only mount (Landlock grants writes on "/"),
// so the write-open fails with the mount's EROFS.
func TestFSProcSelfMem(t *testing.T) {
	nativeOnly(t, "/proc/self/mem is gVisor's own implementation, inside its user-space kernel: writing one's own memory there cannot reach the host's kernel (the CVE class is a host-kernel bug)")
	runProbeCase(t, probeCase{op: "procmem", wantErrno: "EROFS"})
}

// The agent's own /proc entries through the files API: the agent holds
// descriptors on host objects and the sandbox's control socket.
func TestFSAgentProcThroughFilesAPI(t *testing.T) {
	// Control: natively root reads another process's environment and
	// descriptors.
	p := exec.Command("sleep", "60")
	p.Env = []string{"PADDOCK_HOSTILE_MARK=1"}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	var environ []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		// (Until the child has exec'd, it shows its parent's environment.)
		if environ, _ = os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Process.Pid)); bytes.Contains(environ, []byte("PADDOCK_HOSTILE_MARK")) {
			break
		}
	}
	if !bytes.Contains(environ, []byte("PADDOCK_HOSTILE_MARK")) {
		t.Fatalf("positive control: natively reading /proc/PID/environ failed: %q", environ)
	}
	e := newEnv(t, testenv.Options{})
	id := e.sandbox(client.Spec{})
	for _, path := range []string{"/proc/1/environ", "/proc/1/mem", "/proc/self/environ", "/proc/thread-self/environ", "/proc/1/root/etc/passwd", "/proc/self/fd/0", "/proc/1/fd/3"} {
		b, err := e.Client.ReadFile(ctxT(t, time.Minute), id, path)
		var ce *client.Error
		if !errors.As(err, &ce) || (ce.Code != "forbidden" && ce.Code != "invalid_argument") || len(b) > 0 {
			t.Fatalf("files API read of %s: want a refusal (forbidden, or invalid_argument for a magic link), got %v (%d bytes)", path, err, len(b))
		}
		t.Logf("%s: %d %s %q", path, ce.Status, ce.Code, ce.Message)
	}
	e.stillServes(id)
	e.httpAudited("GET /v1/sandboxes/{id}/files", 403)
}
