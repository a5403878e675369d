//go:build linux

package cgroup

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// The delegate: an unprivileged host uid, as a sandbox's root maps to.
const delegateID = 100000

// helperEnv selects a helper mode when the test binary is re-executed.
const helperEnv = "PADDOCK_CGROUP_TEST_HELPER"

func init() {
	if os.Getenv(helperEnv) != "" {
		// As a guest agent should: keep the main thread for the main
		// goroutine, so that a Spawn whose move back fails never strands
		// the main thread (which the runtime parks instead of ending).
		runtime.LockOSThread()
	}
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	code := m.Run()
	if helperDir != "" {
		os.RemoveAll(helperDir)
	}
	os.Exit(code)
}

var (
	helperOnce sync.Once
	helperDir  string
	helperPath string
	helperErr  error
	prefixSeq  atomic.Int64
)

// helperBinary returns a copy of the test binary that the delegate uid can
// execute (go test builds into a 0700 directory).
func helperBinary(t *testing.T) string {
	t.Helper()
	helperOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			helperErr = err
			return
		}
		dir, err := os.MkdirTemp("", "cgroup-helper-")
		if err != nil {
			helperErr = err
			return
		}
		helperDir = dir
		if err := os.Chmod(dir, 0o755); err != nil {
			helperErr = err
			return
		}
		src, err := os.Open(self)
		if err != nil {
			helperErr = err
			return
		}
		defer src.Close()
		p := filepath.Join(dir, "cgroup.test")
		dst, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
		if err != nil {
			helperErr = err
			return
		}
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			helperErr = err
			return
		}
		if err := dst.Close(); err != nil {
			helperErr = err
			return
		}
		helperPath = p
	})
	if helperErr != nil {
		t.Fatalf("helper binary: %v", helperErr)
	}
	return helperPath
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates and delegates cgroups")
	}
}

// testHost detects the host's cgroups under a prefix unique to this test
// and removes every group and prefix directory at the end.
func testHost(t *testing.T) *Host {
	t.Helper()
	requireRoot(t)
	prefix := fmt.Sprintf("paddock-test-%d-%d", os.Getpid(), prefixSeq.Add(1))
	h, err := Detect(DefaultRoot, prefix)
	if errors.Is(err, errs.ErrUnavailable) {
		t.Skipf("no usable cgroups on this host: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupHost(t, h) })
	return h
}

func cleanupHost(t *testing.T, h *Host) {
	t.Helper()
	ids, err := h.List()
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
	for _, id := range ids {
		g, err := h.Open(id)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			continue
		}
		if err := g.Destroy(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	for _, d := range h.prefixDirs() {
		if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			t.Errorf("cleanup: rmdir %s: %v", d, err)
		}
	}
}

// gated is a shell that waits for a line on stdin before running its
// script, so that it can be moved into a group first and every process
// the script starts is born inside it.
type gated struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan error
}

func startGated(t *testing.T, script string) *gated {
	t.Helper()
	p := &gated{done: make(chan error, 1)}
	p.cmd = exec.Command("sh", "-c", "read _ || exit 3; "+script)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	in, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdin = in
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *gated) release(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// wait returns the shell's exit error, failing the test if it does not end
// within limit (a hang guard, not a timing assertion).
func (p *gated) wait(t *testing.T, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		return err
	case <-time.After(limit):
		t.Fatalf("shell did not exit within %v; stderr: %s", limit, p.stderr.String())
		return nil
	}
}

// eventually polls cond until it holds or limit passes (a hang guard).
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fileOwner(t *testing.T, p string) int {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

// runAsDelegate runs the helper mode as the delegate uid with dirs as fds
// 3, 4, ... and returns its JSON report decoded into out. If gate is not
// nil it is called with the child's pid before the child is released.
func runAsDelegate(t *testing.T, mode string, dirs []string, env []string, gate func(pid int), out any) {
	t.Helper()
	bin := helperBinary(t)
	cmd := exec.Command(bin)
	cmd.Dir = "/"
	cmd.Env = append([]string{helperEnv + "=" + mode, "PATH=/usr/bin:/bin"}, env...)
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: delegateID, Gid: delegateID}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if gate != nil {
		gate(cmd.Process.Pid)
	}
	io.WriteString(in, "go\n")
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("helper %s hung; stderr: %s", mode, stderr.String())
	}
	if err != nil {
		t.Fatalf("helper %s: %v; stderr: %s", mode, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("helper %s output %q: %v; stderr: %s", mode, stdout.String(), err, stderr.String())
	}
}

// ---- helper side (runs as the delegate uid, in the re-executed binary) ----

func runHelper(mode string) int {
	// Wait until the parent has moved us into the group.
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		return 2
	}
	var report any
	var err error
	switch mode {
	case "probe":
		report = helperProbe()
	case "guest":
		report, err = helperGuest()
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(report); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func errName(err error) string {
	if err == nil {
		return "ok"
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return unix.ErrnoName(en)
	}
	return err.Error()
}

// helperProbe tries, through the fds only, what a delegate may and may not
// do. fd 3 is the group where sub-groups are made, fd 4 the memory group.
func helperProbe() map[string]string {
	const pidsDir, memDir = 3, 4
	r := map[string]string{}
	pidsMax := os.Getenv("PROBE_PIDS_MAX")
	memMax := os.Getenv("PROBE_MEM_MAX")
	r["mkdir-sub"] = errName(unix.Mkdirat(pidsDir, "probe", 0o755))
	r["write-sub-limit"] = errName(writeAt(pidsDir, "probe/"+os.Getenv("PROBE_SUB_LIMIT"), "10"))
	r["write-group-pids.max"] = errName(writeAt(pidsDir, pidsMax, "100000"))
	r["write-group-memory"] = errName(writeAt(memDir, memMax, "-1"))
	r["mkdir-memory"] = errName(unix.Mkdirat(memDir, "probe-mem", 0o755))
	// Escaping the group: moving ourselves to the parent group.
	r["write-parent-procs"] = errName(writeAt(pidsDir, "../cgroup.procs", strconv.Itoa(os.Getpid())))
	if os.Getenv("PROBE_RELEASE_AGENT") != "" {
		// CVE-2022-0492: a writable release_agent runs a command of our
		// choosing as host root. The fd reaches it through "..". An
		// empty write changes nothing even if it were allowed.
		r["write-release-agent"] = errName(writeAt(pidsDir, "../../../release_agent", ""))
	}
	r["rmdir-sub"] = errName(unix.Unlinkat(pidsDir, "probe", unix.AT_REMOVEDIR))
	return r
}

type guestReport struct {
	OOMBefore    int64
	OOMAfter     int64
	SleepPid     int
	SleepPpid    int
	ShellPid     int
	Self         int
	Procs        []int
	SelfInSub    bool
	ThreadsInSub int
	Killed       int
	After        []int
	Removed      bool

	// v1: the thread whose move back fails.
	MoveBackErr       string
	LockedThreadInSub bool
	OnMainThread      bool
	ThreadGone        bool
	RemovedAfterExit  bool
}

// helperGuest plays the guest agent: an exec in its own sub-group whose
// double-forked daemon is listed and killed.
func helperGuest() (*guestReport, error) {
	v, err := strconv.Atoi(os.Getenv("GUEST_VERSION"))
	if err != nil {
		return nil, err
	}
	d := NewDelegated(Version(v), 3, 4)
	r := &guestReport{Self: os.Getpid(), OOMBefore: d.OOMKills()}
	if _, err := d.NewSub("../escape"); !errors.Is(err, errs.ErrInvalid) {
		return nil, fmt.Errorf("NewSub(../escape) = %v, want ErrInvalid", err)
	}
	s, err := d.NewSub("e1")
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	err = s.Spawn(func(fd int) error {
		cmd = exec.Command("sh", "-c", "(setsid sleep 60 &); exit 0")
		if fd >= 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		}
		return cmd.Start()
	})
	if err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	r.ShellPid = cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	// The shell is gone; its grandchild lives on, re-parented away from us.
	deadline := time.Now().Add(10 * time.Second)
	for r.SleepPid == 0 {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no sleep in the sub-group; procs %v", r.Procs)
		}
		if r.Procs, err = s.Procs(); err != nil {
			return nil, err
		}
		for _, p := range r.Procs {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); strings.TrimSpace(string(b)) == "sleep" {
				r.SleepPid = p
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.SleepPpid = ppid(r.SleepPid)
	r.SelfInSub = slices.Contains(r.Procs, r.Self)
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, tk := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + tk.Name() + "/cgroup")
		if strings.Contains(string(b), "/e1\n") {
			r.ThreadsInSub++
		}
	}
	if r.Killed, err = s.Kill(); err != nil {
		return nil, fmt.Errorf("kill: %w", err)
	}
	if r.After, err = s.Procs(); err != nil {
		return nil, err
	}
	if r.Removed, err = s.Remove(); err != nil {
		return nil, err
	}
	if _, err := s.Procs(); err == nil {
		return nil, errors.New("Procs of a removed sub-group succeeded")
	}
	r.OOMAfter = d.OOMKills()
	if d.version == V1 {
		if err := moveBackFails(d, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// moveBackFails makes the thread's way back out of a sub-group fail (the
// delegate owns the group's tasks file, so it can make it read-only) and
// checks that the thread stays locked in the sub-group until its goroutine
// ends, and is then gone.
func moveBackFails(d *Delegated, r *guestReport) error {
	s, err := d.NewSub("e2")
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		err := s.Spawn(func(int) error {
			r.OnMainThread = unix.Gettid() == os.Getpid()
			return unix.Fchmodat(d.pids, "tasks", 0o444, 0)
		})
		if err != nil {
			r.MoveBackErr = err.Error()
		}
		// Still on the same thread, which is still in e2.
		b, _ := os.ReadFile("/proc/thread-self/cgroup")
		r.LockedThreadInSub = strings.Contains(string(b), "/e2\n")
		done <- nil
	}()
	<-done
	if err := unix.Fchmodat(d.pids, "tasks", 0o644, 0); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		p, err := s.Procs()
		if err != nil {
			return err
		}
		if len(p) == 0 {
			r.ThreadGone = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.RemovedAfterExit, err = s.Remove()
	return err
}

func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// "pid (comm) state ppid ..."; comm may hold spaces, so cut at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return -1
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
