//go:build linux

package harden

// Every hardening test runs its action in a re-executed copy of the test
// binary (TestMain dispatches on envScenario), so that no restriction is ever
// applied to the test process itself. Each action runs twice: in a child
// without hardening (the positive control: it must succeed, or at least
// reach the kernel) and in a child with the layers under test.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const (
	envScenario = "PADDOCK_HARDEN_SCENARIO"
	envLayers   = "PADDOCK_HARDEN_LAYERS"
	envArg      = "PADDOCK_HARDEN_ARG"
	envRules    = "PADDOCK_HARDEN_RULES"

	resultPrefix = "PADDOCK-HARDEN-RESULT "
	childTimeout = 2 * time.Minute // a hang guard, not an assertion
	maxChildOut  = 1 << 20
)

// keepForTest is the guest agent's keep set.
var keepForTest = []Cap{CapChown, CapDacOverride, CapDacReadSearch, CapFowner, CapFsetid, CapKill, CapSetgid, CapSetuid}

// Layer sets. Seccomp and Landlock need no_new_privs, as in the guest.
const (
	layersNone    = ""
	layersSeccomp = "nnp,seccomp"
	layersFS      = "nnp,fs"
	layersCaps    = "caps"
	layersNNP     = "nnp"
	layersAll     = "nnp,fs,caps,seccomp"
)

func TestMain(m *testing.M) {
	if name, ok := os.LookupEnv(envScenario); ok {
		os.Exit(childMain(name))
	}
	os.Exit(m.Run())
}

// result is what a child reports on stdout.
type result struct {
	Errno string `json:"errno,omitempty"` // "" when the action succeeded
	Err   string `json:"err,omitempty"`
	Out   string `json:"out,omitempty"`
	Setup string `json:"setup,omitempty"` // hardening itself failed
}

// outcome is a child's result plus how it ended.
type outcome struct {
	result
	signal syscall.Signal // non-zero if the child was killed
	stderr string
}

func (o outcome) String() string {
	if o.signal != 0 {
		return "killed by " + unix.SignalName(o.signal)
	}
	if o.Errno != "" {
		return o.Errno
	}
	return "ok"
}

// scenarioEnv is handed to a scenario in the child. apply installs the
// requested layers; a scenario calls it once, after any preparation that
// must happen unrestricted.
type scenarioEnv struct {
	arg    string
	layers string
	rules  FSRules
	apply  func() error
}

type scenario func(env scenarioEnv) (out string, err error)

func childMain(name string) int {
	// A seccomp kill dumps core by default; keep cores out of the tree.
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	enc := json.NewEncoder(os.Stdout)
	report := func(r result) int {
		fmt.Fprint(os.Stdout, resultPrefix)
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, "encode result:", err)
			return 2
		}
		if r.Setup != "" {
			return 3
		}
		return 0
	}
	sc, ok := scenarios()[name]
	if !ok {
		return report(result{Setup: "unknown scenario " + name})
	}
	var rules FSRules
	if s := os.Getenv(envRules); s != "" {
		if err := json.Unmarshal([]byte(s), &rules); err != nil {
			return report(result{Setup: "rules: " + err.Error()})
		}
	}
	layers := os.Getenv(envLayers)
	var setupErr error
	applied := false
	env := scenarioEnv{
		layers: layers,
		arg:    os.Getenv(envArg),
		rules:  rules,
		apply: func() error {
			if applied {
				return errors.New("apply called twice")
			}
			applied = true
			setupErr = applyLayers(layers, rules)
			return setupErr
		},
	}
	out, err := sc(env)
	if setupErr != nil {
		return report(result{Setup: setupErr.Error()})
	}
	if !applied {
		return report(result{Setup: "scenario " + name + " never applied the layers"})
	}
	r := result{Out: out}
	if err != nil {
		r.Err = err.Error()
		r.Errno = errnoName(err)
	}
	return report(r)
}

// applyLayers applies the comma-separated layers in the guest's order.
func applyLayers(layers string, rules FSRules) error {
	want := map[string]bool{}
	for _, l := range strings.Split(layers, ",") {
		if l != "" {
			want[l] = true
		}
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"nnp", SetNoNewPrivs},
		{"fs", func() error { return RestrictFS(rules) }},
		{"caps", func() error {
			// As in the guest: the scenario forks from this (locked) thread.
			runtime.LockOSThread()
			if err := PrepareExecThread(); err != nil {
				return err
			}
			return LimitCaps(keepForTest)
		}},
		{"seccomp", LoadSeccomp},
	}
	for _, s := range steps {
		if !want[s.name] {
			continue
		}
		delete(want, s.name)
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for l := range want {
		return fmt.Errorf("unknown layer %q", l)
	}
	return nil
}

// errnoName names the errno in err's chain ("EPERM"), or "error" if none.
func errnoName(err error) string {
	var e syscall.Errno
	if errors.As(err, &e) {
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
		return fmt.Sprintf("errno(%d)", int(e))
	}
	return "error"
}

// childSpec describes one child run.
type childSpec struct {
	scenario string
	layers   string
	arg      string
	rules    FSRules
}

// requireRoot skips unless the test can create namespaces, load filters and
// change credentials, and unless the binary can use AllThreadsSyscall.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the positive controls use privileged syscalls")
	}
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_GETPID, 0, 0, 0); e == syscall.ENOTSUP {
		t.Skip("syscall.AllThreadsSyscall is unavailable (cgo build); run with CGO_ENABLED=0")
	}
}

// runChild runs one scenario in a fresh copy of the test binary.
func runChild(t *testing.T, c childSpec) outcome {
	t.Helper()
	rules, err := json.Marshal(c.rules)
	if err != nil {
		t.Fatalf("marshal rules: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envScenario+"="+c.scenario,
		envLayers+"="+c.layers,
		envArg+"="+c.arg,
		envRules+"="+string(rules),
	)
	cmd.Dir = t.TempDir()
	// A session of its own: no controlling terminal to disturb.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdout := &capped{max: maxChildOut}
	stderr := &capped{max: maxChildOut}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()

	o := outcome{stderr: stderr.String()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		o.signal = ws.Signal()
		return o
	}
	line, found := resultLine(stdout.Bytes())
	if !found && strings.Contains(stderr.String(), "unexpected fault address") {
		// The kernel delivered SIGSEGV (e.g. int 0x80 without IA32
		// emulation); the Go runtime turned it into exit status 2.
		o.signal = syscall.SIGSEGV
		return o
	}
	if !found {
		t.Fatalf("child %s [%s]: no result (%v)\nstdout: %s\nstderr: %s", c.scenario, c.layers, runErr, stdout, stderr)
	}
	if err := json.Unmarshal(line, &o.result); err != nil {
		t.Fatalf("child %s: bad result %q: %v", c.scenario, line, err)
	}
	if o.Setup != "" {
		t.Fatalf("child %s [%s]: hardening failed: %s\nstderr: %s", c.scenario, c.layers, o.Setup, stderr)
	}
	if runErr != nil {
		t.Fatalf("child %s [%s]: %v\nstderr: %s", c.scenario, c.layers, runErr, stderr)
	}
	return o
}

func resultLine(out []byte) ([]byte, bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, maxChildOut)
	var last []byte
	found := false
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(resultPrefix)); ok {
			last, found = slices.Clone(rest), true
		}
	}
	return last, found
}

// capped is a bytes.Buffer that stops growing at max bytes.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// matches reports whether o is one of want: "ok", an errno name, or a
// signal name ("SIGSYS") for a kill.
func matches(o outcome, want ...string) bool {
	got := o.Errno
	switch {
	case o.signal != 0:
		got = unix.SignalName(o.signal)
	case got == "":
		got = "ok"
	}
	return slices.Contains(want, got)
}

// controlThenRestricted runs the positive control and the restricted run.
// The control must end in one of control; an ENOSYS control means the kernel
// lacks the feature and skips the test.
func controlThenRestricted(t *testing.T, c childSpec, control []string, restricted ...string) (ctl, res outcome) {
	t.Helper()
	cs := c
	cs.layers = layersNone
	ctl = runChild(t, cs)
	if !matches(ctl, control...) {
		if ctl.Errno == "ENOSYS" {
			t.Skipf("%s: kernel lacks the feature (ENOSYS natively)", c.scenario)
		}
		t.Fatalf("positive control %s: got %s (%s), want one of %v; stderr: %s", c.scenario, ctl, ctl.Err, control, ctl.stderr)
	}
	res = runChild(t, c)
	if !matches(res, restricted...) {
		t.Fatalf("restricted %s [%s]: got %s (%s), want one of %v; stderr: %s", c.scenario, c.layers, res, res.Err, restricted, res.stderr)
	}
	t.Logf("%s: unrestricted %s, [%s] %s", c.scenario, ctl, c.layers, res)
	return ctl, res
}

// scenarios maps names to child actions. Architecture-specific ones come
// from archScenarios.
func scenarios() map[string]scenario {
	m := map[string]scenario{}
	for _, set := range []map[string]scenario{seccompScenarios(), landlockScenarios(), capsScenarios(), archScenarios()} {
		for k, v := range set {
			m[k] = v
		}
	}
	return m
}

// parseStatus parses /proc/PID/status ("Key:\tvalue" lines).
func parseStatus(s string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		m[k] = strings.TrimSpace(v)
	}
	return m
}

func TestParseStatus(t *testing.T) {
	got := parseStatus("Name:\tcat\nCapEff:\t0000000000000000\nSeccomp:\t2\nbogus line\n:\tx\nSpeculation_Store_Bypass:\tthread force mitigated\n")
	want := map[string]string{"Name": "cat", "CapEff": "0000000000000000", "Seccomp": "2", "Speculation_Store_Bypass": "thread force mitigated"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys %v, want %d", len(got), got, len(want))
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add("Name:\tcat\nCapEff:\t0000000000000000\n")
	f.Add("NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n")
	f.Add(":::\n\n\t:\x00")
	f.Fuzz(func(t *testing.T, s string) {
		for k, v := range parseStatus(s) {
			if k == "" || strings.Contains(k, "\n") || strings.Contains(v, "\n") {
				t.Fatalf("bad entry %q=%q", k, v)
			}
		}
	})
}
