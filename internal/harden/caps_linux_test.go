//go:build linux

package harden

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

const workloadUID = 1000

// statusFields are the /proc status lines the posture tests look at.
var statusFields = []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"}

// asUID returns a command that runs as uid (and the same gid) when uid != 0.
func asUID(uid int, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	return cmd
}

func capsScenarios() map[string]scenario {
	return map[string]scenario{
		// arg is "UID" or "UID:CAT": exec CAT (default /bin/cat)
		// /proc/self/status as UID.
		"cat-status": func(env scenarioEnv) (string, error) {
			u, bin, ok := strings.Cut(env.arg, ":")
			if !ok {
				bin = "/bin/cat"
			}
			uid, err := strconv.Atoi(u)
			if err != nil {
				return "", err
			}
			if err := env.apply(); err != nil {
				return "", err
			}
			out, err := asUID(uid, bin, "/proc/self/status").Output()
			return string(out), err
		},
		// The status of threads that existed before the layers went on.
		"threads-status": func(env scenarioEnv) (string, error) {
			return onLockedThreads(env, func() string {
				b, err := os.ReadFile("/proc/thread-self/status")
				if err != nil {
					return errnoName(err)
				}
				st := parseStatus(string(b))
				var parts []string
				for _, f := range statusFields {
					parts = append(parts, f+":"+st[f])
				}
				return strings.Join(parts, ",")
			})
		},
		"limitcaps-range": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			err := LimitCaps([]Cap{CapChown, maxCap})
			var errno syscall.Errno
			if errors.As(err, &errno) {
				return "", fmt.Errorf("range check reached the kernel: %w", err)
			}
			return fmt.Sprint(err), nil
		},
		// arg is a setuid-root copy of id; run it as an ordinary user.
		"setuid-id": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			out, err := asUID(workloadUID, env.arg, "-u").Output()
			return strings.TrimSpace(string(out)), err
		},
		// What a workload normally does must keep working. arg is a
		// writable directory.
		"ordinary-work": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			res := map[string]string{}
			out, err := exec.Command("/bin/sh", "-c", "echo hi | cat").Output()
			if err != nil {
				return "", fmt.Errorf("pipeline: %w", err)
			}
			res["pipeline"] = strings.TrimSpace(string(out))

			out, err = asUID(workloadUID, "/bin/sh", "-c", "id -u; echo data > "+filepath.Join(env.arg, "by-user")+"; cat "+filepath.Join(env.arg, "by-user")).Output()
			if err != nil {
				return "", fmt.Errorf("as uid %d: %w", workloadUID, err)
			}
			res["as-user"] = strings.Join(strings.Fields(string(out)), " ")

			f := filepath.Join(env.arg, "written")
			if err := os.WriteFile(f, []byte("payload"), 0o644); err != nil {
				return "", fmt.Errorf("write: %w", err)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			res["file"] = string(b)

			// New threads (locked goroutines force the runtime to create
			// them) inherit the layers and can fork/exec.
			var wg sync.WaitGroup
			errc := make(chan error, lockedThreads)
			for range lockedThreads {
				wg.Go(func() {
					// LockOSThread without unlock: the thread exits with the goroutine.
					runtime.LockOSThread()
					st, err := os.ReadFile("/proc/thread-self/status")
					if err != nil {
						errc <- err
						return
					}
					if s := parseStatus(string(st)); env.layers == layersAll && (s["Seccomp"] != "2" || s["NoNewPrivs"] != "1") {
						errc <- fmt.Errorf("new thread: Seccomp %s NoNewPrivs %s", s["Seccomp"], s["NoNewPrivs"])
						return
					}
					errc <- exec.Command("/bin/true").Run()
				})
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				if err != nil {
					return "", fmt.Errorf("thread: %w", err)
				}
			}
			res["threads"] = "ok"
			// A process reads from a pipe and writes to /dev/null.
			cmd := exec.Command("/bin/cat")
			cmd.Stdin = strings.NewReader("to null")
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				return "", fmt.Errorf("cat to null: %w", err)
			}
			j, err := json.Marshal(res)
			return string(j), err
		},
	}
}

func statusOf(t *testing.T, o outcome) map[string]string {
	t.Helper()
	if o.signal != 0 || o.Errno != "" {
		t.Fatalf("child: %s (%s) %s", o, o.Err, o.stderr)
	}
	st := parseStatus(o.Out)
	for _, f := range statusFields {
		if _, ok := st[f]; !ok {
			t.Fatalf("status has no %s:\n%s", f, o.Out)
		}
	}
	return st
}

const zeroCaps = "0000000000000000"

// TestLimitCapsExec: after LimitCaps, whatever the guest execs — as uid 0 or
// not — holds no capability at all, and cannot regain one.
func TestLimitCapsExec(t *testing.T) {
	requireRoot(t)
	ctl := statusOf(t, runChild(t, childSpec{scenario: "cat-status", arg: "0"}))
	if ctl["CapEff"] == zeroCaps || ctl["CapBnd"] == zeroCaps {
		t.Fatalf("positive control as root: CapEff %s CapBnd %s, want non-zero", ctl["CapEff"], ctl["CapBnd"])
	}
	for _, layers := range []string{layersCaps, layersAll} {
		for _, uid := range []string{"0", strconv.Itoa(workloadUID)} {
			rules := FSRules{WritableFiles: []string{"/dev/null"}}
			st := statusOf(t, runChild(t, childSpec{scenario: "cat-status", layers: layers, arg: uid, rules: rules}))
			for _, f := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if st[f] != zeroCaps {
					t.Errorf("[%s] uid %s: %s = %s, want 0", layers, uid, f, st[f])
				}
			}
			if layers == layersAll && (st["NoNewPrivs"] != "1" || st["Seccomp"] != "2") {
				t.Errorf("[%s] uid %s: NoNewPrivs %s Seccomp %s, want 1 and 2", layers, uid, st["NoNewPrivs"], st["Seccomp"])
			}
		}
	}
}

// setFileCaps gives path the file capabilities mask as permitted+effective
// (a struct vfs_cap_data, revision 2, in security.capability).
func setFileCaps(path string, mask uint64) error {
	const revision2, effective = 0x02000000, 0x1
	var b [20]byte
	binary.LittleEndian.PutUint32(b[0:], revision2|effective)
	binary.LittleEndian.PutUint32(b[4:], uint32(mask))      // permitted, low
	binary.LittleEndian.PutUint32(b[12:], uint32(mask>>32)) // permitted, high
	return unix.Setxattr(path, "security.capability", b[:], 0)
}

// TestLimitCapsFileCaps: a file-capability binary run by an ordinary user
// gets its capability natively; after LimitCaps (empty bounding set) or
// under no_new_privs it gets nothing (or does not run at all).
func TestLimitCapsFileCaps(t *testing.T) {
	requireRoot(t)
	dir, err := os.MkdirTemp("", "paddock-harden-fcaps-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cat")
	b, err := os.ReadFile("/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := setFileCaps(bin, 1<<CapDacOverride); err != nil {
		t.Skipf("cannot set file capabilities here: %v", err)
	}
	arg := strconv.Itoa(workloadUID) + ":" + bin
	ctl := statusOf(t, runChild(t, childSpec{scenario: "cat-status", arg: arg}))
	if want := fmt.Sprintf("%016x", uint64(1)<<CapDacOverride); ctl["CapEff"] != want {
		t.Fatalf("positive control: file-capability cat as uid %d: CapEff %s, want %s", workloadUID, ctl["CapEff"], want)
	}
	// With an empty bounding set the kernel cannot grant the file's
	// capabilities and, the effective bit being set, refuses the execve
	// (EPERM) rather than run it without them. no_new_privs alone lets it
	// run but clamps it to the caller's (empty) permitted set.
	for _, c := range []struct{ layers, want string }{
		{layersCaps, "EPERM"}, {layersAll, "EPERM"}, {layersNNP, "ok"},
	} {
		res := runChild(t, childSpec{scenario: "cat-status", layers: c.layers, arg: arg, rules: FSRules{WritableFiles: []string{"/dev/null"}}})
		if !matches(res, c.want) {
			t.Fatalf("[%s] file-capability cat: %s (%s), want %s", c.layers, res, res.Err, c.want)
		}
		if c.want == "ok" {
			if st := statusOf(t, res); st["CapEff"] != zeroCaps || st["CapPrm"] != zeroCaps {
				t.Errorf("[%s] file-capability cat: CapEff %s CapPrm %s, want 0", c.layers, st["CapEff"], st["CapPrm"])
			}
		}
	}
}

// TestLayersAllThreads: every thread of the hardened process, including ones
// created before the calls, carries every layer.
func TestLayersAllThreads(t *testing.T) {
	requireRoot(t)
	var keep uint64
	for _, c := range keepForTest {
		keep |= 1 << c
	}
	keepHex := fmt.Sprintf("%016x", keep)
	// The bounding set is emptied on the forking thread only (see
	// PrepareExecThread); every thread has the rest.
	want := map[string]string{
		"CapInh": zeroCaps, "CapPrm": keepHex, "CapEff": keepHex, "CapAmb": zeroCaps,
		"NoNewPrivs": "1", "Seccomp": "2",
	}
	rules := FSRules{WritableFiles: []string{"/dev/null"}}
	ctl := runChild(t, childSpec{scenario: "threads-status", rules: rules})
	if !strings.Contains(ctl.Out, "NoNewPrivs:0") || !strings.Contains(ctl.Out, "Seccomp:0") {
		t.Fatalf("positive control: threads already restricted: %s", ctl.Out)
	}
	res := runChild(t, childSpec{scenario: "threads-status", layers: layersAll, rules: rules})
	lines := strings.Fields(res.Out)
	if len(lines) != lockedThreads {
		t.Fatalf("got %d thread reports: %q", len(lines), res.Out)
	}
	for _, line := range lines {
		tid, fields, _ := strings.Cut(line, "=")
		for kv := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(kv, ":")
			if w, ok := want[k]; ok && w != v {
				t.Errorf("thread %s: %s = %s, want %s", tid, k, v, want[k])
			}
		}
	}
}

// TestNoNewPrivsSetuid: a setuid-root binary gives euid 0 natively; under
// no_new_privs the bit is ignored.
func TestNoNewPrivsSetuid(t *testing.T) {
	requireRoot(t)
	id, err := exec.LookPath("id")
	if err != nil {
		t.Skip("no id binary")
	}
	dir, err := os.MkdirTemp("", "paddock-harden-suid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // uid 1000 must reach the binary
		t.Fatal(err)
	}
	suid := filepath.Join(dir, "id")
	b, err := os.ReadFile(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(suid, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(suid, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	ctl := runChild(t, childSpec{scenario: "setuid-id", arg: suid})
	if ctl.Errno == "EACCES" || (ctl.Errno == "" && ctl.Out == strconv.Itoa(workloadUID)) {
		t.Skipf("setuid bits not honoured here (nosuid mount?): %s %q", ctl, ctl.Out)
	}
	if ctl.Errno != "" || ctl.Out != "0" {
		t.Fatalf("positive control: setuid id as uid %d: %s %q, want euid 0", workloadUID, ctl, ctl.Out)
	}
	for _, layers := range []string{layersNNP, layersAll} {
		res := runChild(t, childSpec{scenario: "setuid-id", layers: layers, arg: suid, rules: FSRules{WritableFiles: []string{"/dev/null"}}})
		if res.Errno != "" || res.Out != strconv.Itoa(workloadUID) {
			t.Fatalf("[%s] setuid id: %s %q, want euid %d", layers, res, res.Out, workloadUID)
		}
	}
}

// TestHardenedOrdinaryWork: everything on, the ordinary things still work.
func TestHardenedOrdinaryWork(t *testing.T) {
	requireRoot(t)
	for _, layers := range []string{layersNone, layersAll} {
		dir := t.TempDir()
		// uid 1000 writes here too.
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		rules := FSRules{WritableTrees: []string{dir}, WritableFiles: []string{"/dev/null"}}
		res := runChild(t, childSpec{scenario: "ordinary-work", layers: layers, arg: dir, rules: rules})
		if res.signal != 0 || res.Errno != "" || res.Err != "" {
			t.Fatalf("[%s] %s (%s) %s", layers, res, res.Err, res.stderr)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(res.Out), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"pipeline": "hi", "as-user": "1000 data", "file": "payload", "threads": "ok"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("[%s] %s = %q, want %q", layers, k, got[k], v)
			}
		}
	}
}

func TestLimitCapsRange(t *testing.T) {
	requireRoot(t)
	res := runChild(t, childSpec{scenario: "limitcaps-range"})
	if !strings.Contains(res.Out, "out of range") {
		t.Fatalf("LimitCaps(64) = %q, want out of range", res.Out)
	}
}
