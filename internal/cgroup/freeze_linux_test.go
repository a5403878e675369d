//go:build linux

package cgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// freezerGroup is a new group of the test host, or a skip where this host
// has no freezer (a v1 host without the freezer hierarchy mounted).
func freezerGroup(t *testing.T, name string) *Group {
	t.Helper()
	h := testHost(t)
	if h.Version() == V1 && h.l.freezer == "" {
		t.Skip("needs a freezer: the v1 freezer hierarchy is not mounted")
	}
	g, err := h.Create(name, Limits{}, delegateID, delegateID)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A busy process in a frozen group gets no CPU; thawed, it runs again.
// Positive control: the same process, unfrozen, does accumulate CPU.
func TestFreezeStopsCPU(t *testing.T) {
	g := freezerGroup(t, "pause")
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := g.AddWorkloadProc(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	cpu := func() time.Duration {
		st, err := g.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st.CPUUsage
	}
	ctx := context.Background()
	before := cpu()
	time.Sleep(200 * time.Millisecond)
	if ran := cpu() - before; ran < 20*time.Millisecond {
		t.Fatalf("control: the busy loop used only %v of CPU in 200ms unfrozen", ran)
	}
	for range 2 { // idempotent
		if err := g.Freeze(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if f, err := g.Frozen(); err != nil || !f {
		t.Fatalf("Frozen() = %v, %v after Freeze", f, err)
	}
	frozenAt := cpu()
	time.Sleep(300 * time.Millisecond)
	if ran := cpu() - frozenAt; ran > 5*time.Millisecond {
		t.Errorf("a frozen busy loop used %v of CPU in 300ms", ran)
	}
	for range 2 {
		if err := g.Thaw(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if f, err := g.Frozen(); err != nil || f {
		t.Fatalf("Frozen() = %v, %v after Thaw", f, err)
	}
	thawedAt := cpu()
	time.Sleep(200 * time.Millisecond)
	if ran := cpu() - thawedAt; ran < 20*time.Millisecond {
		t.Errorf("a thawed busy loop used only %v of CPU in 200ms", ran)
	}
	// Destroy works on a frozen group (SIGKILL takes effect on thaw).
	if err := g.Freeze(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
}

// fakeV2 is a v2 group directory made of plain files, with the kernel's
// answer in cgroup.events set by the test.
func fakeV2(t *testing.T, events string) (*Group, string) {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{"cgroup.freeze": "0\n", "cgroup.events": events} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Group{id: "fake", unified: dir}, dir
}

func TestFreezeV2Files(t *testing.T) {
	cases := []struct {
		name    string
		events  string
		freeze  bool
		wantErr error
		want    string // cgroup.freeze afterwards
	}{
		{"freeze settles", "populated 1\nfrozen 1\n", true, nil, "1"},
		{"thaw settles", "populated 1\nfrozen 0\n", false, nil, "0"},
		{"freeze never settles is undone", "populated 1\nfrozen 0\n", true, errs.ErrTimeout, "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, dir := fakeV2(t, c.events)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var err error
			if c.freeze {
				err = g.Freeze(ctx)
			} else {
				err = g.Thaw(ctx)
			}
			if !errors.Is(err, c.wantErr) && !(err == nil && c.wantErr == nil) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.freeze"))
			if got := strings.TrimSpace(string(b)); got != c.want {
				t.Errorf("cgroup.freeze = %q, want %q", got, c.want)
			}
			f, err := g.Frozen()
			if err != nil || f != (c.want == "1") {
				t.Errorf("Frozen() = %v, %v", f, err)
			}
		})
	}
	// A kernel without cgroup.freeze (before 5.2) is "unsupported".
	g := &Group{id: "old", unified: t.TempDir()}
	if err := g.Freeze(context.Background()); !errors.Is(err, errs.ErrUnsupported) {
		t.Errorf("Freeze without cgroup.freeze = %v, want unsupported", err)
	}
	// No freezer at all (v1 without the freezer hierarchy).
	if err := (&Group{id: "none"}).Freeze(context.Background()); !errors.Is(err, errs.ErrUnsupported) {
		t.Errorf("Freeze without a freezer = %v, want unsupported", err)
	}
}

// A workload that keeps forking short-lived commands (the shape that left
// the v1 freezer in FREEZING until the pause timed out) freezes every time,
// and while frozen nothing new runs. Twenty rounds: one stuck freeze fails.
func TestFreezeForkingWorkload(t *testing.T) {
	g := freezerGroup(t, "forking")
	dir := t.TempDir()
	counter := filepath.Join(dir, "c")
	// The loop waits for a line on stdin: it starts only once the shell is
	// in the group, so no child forked before the move runs outside it.
	cmd := exec.Command("sh", "-c", `read go; i=0; while :; do i=$((i+1)); echo $i > "$1.new"; mv "$1.new" "$1"; /bin/true; done`, "sh", counter)
	start, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := g.AddWorkloadProc(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer g.Thaw(ctx) // before the kill above: a frozen task cannot die
	if _, err := start.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(counter); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the workload never wrote its counter")
		}
	}
	read := func() string { b, _ := os.ReadFile(counter); return string(b) }
	for round := range 20 {
		if err := g.Freeze(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		a := read()
		time.Sleep(20 * time.Millisecond)
		if b := read(); a != b {
			t.Fatalf("round %d: the counter moved while frozen (%q → %q)", round, a, b)
		}
		if err := g.Thaw(ctx); err != nil {
			t.Fatalf("round %d: thaw: %v", round, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Positive control: thawed, the workload runs.
	a := read()
	time.Sleep(100 * time.Millisecond)
	if read() == a {
		t.Fatal("control: the counter did not move while thawed")
	}
}
