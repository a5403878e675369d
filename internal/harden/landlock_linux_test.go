//go:build linux

package harden

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

const lockedThreads = 6

// openWrite opens path for writing and closes it at once: nothing is ever
// written (the path may be /proc/sysrq-trigger).
func openWrite(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

func landlockScenarios() map[string]scenario {
	return map[string]scenario{
		"open-write": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", openWrite(env.arg)
		},
		"write-file": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			if err := os.WriteFile(env.arg, []byte("paddock"), 0o644); err != nil {
				return "", err
			}
			b, err := os.ReadFile(env.arg)
			return string(b), err
		},
		"create-new": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			fd, err := unix.Open(env.arg, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
			if err != nil {
				return "", err
			}
			return "", unix.Close(fd)
		},
		"mkdir": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", unix.Mkdir(env.arg, 0o755)
		},
		"remove": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", unix.Unlink(env.arg)
		},
		"truncate": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", unix.Truncate(env.arg, 0)
		},
		"rename": func(env scenarioEnv) (string, error) {
			src, dst, ok := strings.Cut(env.arg, "\n")
			if !ok {
				return "", errors.New("rename needs src\\ndst")
			}
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", unix.Rename(src, dst)
		},
		"exec": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return "", exec.Command(env.arg).Run()
		},
		"abstract-connect": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			c, err := net.Dial("unix", env.arg)
			if err != nil {
				return "", err
			}
			return "", c.Close()
		},
		// Threads that exist before RestrictFS must be restricted too.
		"threads-open-write": func(env scenarioEnv) (string, error) {
			return onLockedThreads(env, func() string {
				if err := openWrite(env.arg); err != nil {
					return errnoName(err)
				}
				return "ok"
			})
		},
	}
}

// onLockedThreads parks lockedThreads goroutines on their own OS threads,
// applies the layers, then runs fn on each of those threads and reports
// "tid=result" lines.
func onLockedThreads(env scenarioEnv, fn func() string) (string, error) {
	type ready struct {
		tid int
		run chan chan string
	}
	readies := make(chan ready)
	for range lockedThreads {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
			r := ready{tid: unix.Gettid(), run: make(chan chan string)}
			readies <- r
			reply := <-r.run
			reply <- fn()
		}()
	}
	var threads []ready
	for range lockedThreads {
		threads = append(threads, <-readies)
	}
	if err := env.apply(); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range threads {
		reply := make(chan string)
		r.run <- reply
		fmt.Fprintf(&b, "%d=%s\n", r.tid, <-reply)
	}
	return b.String(), nil
}

// fsLayout is a tree standing in for a sandbox root: ro plays /proc (not
// writable), rw a writable tree.
type fsLayout struct {
	root, ro, rw string
	fake         string // ro/sysrq-trigger, stands in for /proc/sysrq-trigger
	allowed      string // ro/allowed: a WritableFiles entry inside ro
	sibling      string // ro/sibling: next to allowed, not listed
	existing     string // rw/existing
}

func newLayout(t *testing.T) (fsLayout, FSRules) {
	t.Helper()
	root := t.TempDir()
	l := fsLayout{root: root, ro: filepath.Join(root, "ro"), rw: filepath.Join(root, "rw")}
	l.fake = filepath.Join(l.ro, "sysrq-trigger")
	l.allowed = filepath.Join(l.ro, "allowed")
	l.sibling = filepath.Join(l.ro, "sibling")
	l.existing = filepath.Join(l.rw, "existing")
	for _, d := range []string{l.ro, l.rw} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{l.fake, l.allowed, l.sibling, l.existing} {
		if err := os.WriteFile(f, []byte("seed"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rules := FSRules{
		WritableTrees: []string{l.rw, filepath.Join(root, "missing-tree")},
		WritableFiles: []string{"/dev/null", l.allowed, filepath.Join(root, "missing-file")},
	}
	return l, rules
}

func TestLandlock(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name       string
		scenario   string
		arg        func(l fsLayout) string
		restricted []string // the control must succeed
	}{
		{"write under non-writable tree", "open-write", func(l fsLayout) string { return l.fake }, []string{"EACCES"}},
		{"/proc/sysrq-trigger for write", "open-write", func(fsLayout) string { return "/proc/sysrq-trigger" }, []string{"EACCES"}},
		{"/proc/sys/kernel/core_pattern for write", "open-write", func(fsLayout) string { return "/proc/sys/kernel/core_pattern" }, []string{"EACCES"}},
		{"/proc/self/mem for write", "open-write", func(fsLayout) string { return "/proc/self/mem" }, []string{"EACCES"}},
		{"truncate under non-writable tree", "truncate", func(l fsLayout) string { return l.fake }, []string{"EACCES"}},
		{"unlisted file next to a writable file", "open-write", func(l fsLayout) string { return l.sibling }, []string{"EACCES"}},
		// Creating is allowed anywhere but the new file is not writable
		// outside the writable trees.
		{"create for write under non-writable tree", "create-new", func(l fsLayout) string { return filepath.Join(l.ro, "new") }, []string{"EACCES"}},
		// Moving a file into a writable tree would give it write access;
		// Landlock refuses the reparenting.
		{"rename out of non-writable tree", "rename", func(l fsLayout) string { return l.fake + "\n" + filepath.Join(l.rw, "moved") }, []string{"EXDEV"}},
		{"write under writable tree (new)", "write-file", func(l fsLayout) string { return filepath.Join(l.rw, "new") }, []string{"ok"}},
		{"write under writable tree (existing)", "write-file", func(l fsLayout) string { return l.existing }, []string{"ok"}},
		{"truncate under writable tree", "truncate", func(l fsLayout) string { return l.existing }, []string{"ok"}},
		{"writable file", "open-write", func(l fsLayout) string { return l.allowed }, []string{"ok"}},
		{"/dev/null", "open-write", func(fsLayout) string { return "/dev/null" }, []string{"ok"}},
		{"mkdir in non-writable tree", "mkdir", func(l fsLayout) string { return filepath.Join(l.ro, "newdir") }, []string{"ok"}},
		{"mkdir in writable tree", "mkdir", func(l fsLayout) string { return filepath.Join(l.rw, "newdir") }, []string{"ok"}},
		{"remove in non-writable tree", "remove", func(l fsLayout) string { return l.sibling }, []string{"ok"}},
		{"exec", "exec", func(fsLayout) string { return "/bin/true" }, []string{"ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Fresh trees for each run: renames and creates change them.
			l, rules := newLayout(t)
			ctl := runChild(t, childSpec{scenario: tc.scenario, arg: tc.arg(l), rules: rules})
			if ctl.Errno == "ENOENT" && strings.HasPrefix(tc.arg(l), "/proc/") {
				t.Skipf("%s does not exist on this kernel", tc.arg(l))
			}
			if !matches(ctl, "ok") {
				t.Fatalf("positive control: %s (%s)", ctl, ctl.Err)
			}
			l, rules = newLayout(t)
			res := runChild(t, childSpec{scenario: tc.scenario, layers: layersFS, arg: tc.arg(l), rules: rules})
			if !matches(res, tc.restricted...) {
				t.Fatalf("restricted: %s (%s), want %v", res, res.Err, tc.restricted)
			}
		})
	}
}

func TestLandlockAllThreads(t *testing.T) {
	requireRoot(t)
	l, rules := newLayout(t)
	for _, c := range []struct {
		layers string
		want   string
	}{{layersNone, "ok"}, {layersFS, "EACCES"}, {layersAll, "EACCES"}} {
		res := runChild(t, childSpec{scenario: "threads-open-write", layers: c.layers, arg: l.fake, rules: rules})
		lines := strings.Fields(res.Out)
		if len(lines) != lockedThreads {
			t.Fatalf("[%s] got %d thread reports: %q", c.layers, len(lines), res.Out)
		}
		for _, line := range lines {
			if _, got, _ := strings.Cut(line, "="); got != c.want {
				t.Errorf("[%s] thread %s, want %s", c.layers, line, c.want)
			}
		}
	}
}

// TestLandlockAbstractUnix: abstract sockets bound outside the sandbox are
// unreachable from inside when scoping is in force (ABI 8+; see
// scopeAbstractUnix for why not below).
func TestLandlockAbstractUnix(t *testing.T) {
	requireRoot(t)
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		t.Skipf("landlock: %v", err)
	}
	name := "@paddock-harden-test-" + strconv.Itoa(os.Getpid())
	ln, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, rules := newLayout(t)
	want := "ok"
	if scopeAbstractUnix(abi) {
		want = "EPERM"
	}
	t.Logf("landlock ABI %d: abstract unix scoping %v", abi, scopeAbstractUnix(abi))
	ctl := runChild(t, childSpec{scenario: "abstract-connect", arg: name, rules: rules})
	if !matches(ctl, "ok") {
		t.Fatalf("positive control: %s (%s)", ctl, ctl.Err)
	}
	res := runChild(t, childSpec{scenario: "abstract-connect", layers: layersFS, arg: name, rules: rules})
	if !matches(res, want) {
		t.Fatalf("restricted: %s (%s), want %s", res, res.Err, want)
	}
}

func TestFSRulesValidation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	many := make([]string, maxRulePaths+1)
	for i := range many {
		many[i] = dir
	}
	tests := []struct {
		name      string
		r         FSRules
		wantErr   error
		wantTrees []string
		wantFiles []string
	}{
		{"relative tree", FSRules{WritableTrees: []string{"tmp"}}, errs.ErrInvalid, nil, nil},
		{"relative file", FSRules{WritableFiles: []string{"dev/null"}}, errs.ErrInvalid, nil, nil},
		{"directory as file", FSRules{WritableFiles: []string{dir}}, errs.ErrInvalid, nil, nil},
		{"too many", FSRules{WritableTrees: many}, errs.ErrInvalid, nil, nil},
		{"missing skipped", FSRules{
			WritableTrees: []string{dir, filepath.Join(dir, "nope"), filepath.Join(file, "under-a-file")},
			WritableFiles: []string{file, filepath.Join(dir, "nope")},
		}, nil, []string{dir}, []string{file}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trees, files, _, err := tc.r.existing()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if fmt.Sprint(trees) != fmt.Sprint(tc.wantTrees) || fmt.Sprint(files) != fmt.Sprint(tc.wantFiles) {
				t.Fatalf("got trees %v files %v, want %v %v", trees, files, tc.wantTrees, tc.wantFiles)
			}
		})
	}
}
