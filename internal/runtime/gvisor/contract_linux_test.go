//go:build linux

package gvisor_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// The same agent contract as native: files, processes and PTYs through the
// guest protocol.

func TestFiles(t *testing.T) {
	e := newEnv(t, nil)
	inst := e.create(e.config())
	g := inst.Guest()
	ctx := t.Context()
	body := bytes.Repeat([]byte("paddock "), 100000) // 800 kB
	if _, err := g.WriteFile(ctx, guestapi.WriteRequest{Path: "/workspace/dir/f.txt", Parents: true},
		bytes.NewReader(body), int64(len(body))); err != nil {
		t.Fatalf("write: %v", err)
	}
	// Written through the files API, seen by a process, and back.
	if res := sh(t, inst, "wc -c < /workspace/dir/f.txt"); strings.TrimSpace(res.Stdout) != "800000" {
		t.Fatalf("size seen inside: %+v", res)
	}
	sh(t, inst, "echo made-inside > /workspace/dir/g.txt; ln -s /etc/hostname /workspace/dir/link")
	r, err := g.ReadFile(ctx, guestapi.ReadRequest{Path: "/workspace/dir/g.txt"})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	got, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(got) != "made-inside\n" {
		t.Fatalf("read %q", got)
	}
	// Path resolution follows ordinary symlinks (gVisor has no openat2:
	// the agent walks paths itself).
	r, err = g.ReadFile(ctx, guestapi.ReadRequest{Path: "/workspace/dir/link"})
	if err != nil {
		t.Fatalf("read through a symlink: %v", err)
	}
	got, _ = io.ReadAll(r.Body)
	r.Body.Close()
	if string(got) != "sandbox\n" {
		t.Fatalf("read through a symlink: %q", got)
	}
	ls, err := g.List(ctx, guestapi.ListRequest{Path: "/workspace/dir"})
	if err != nil || len(ls.Entries) != 3 {
		t.Fatalf("list: %+v %v", ls, err)
	}
	// ... but never a magic link into the agent's descriptors.
	if _, err := g.ReadFile(ctx, guestapi.ReadRequest{Path: "/proc/self/fd/0"}); err == nil {
		t.Fatal("read through /proc/self/fd")
	}
	if _, err := g.Stat(ctx, guestapi.StatRequest{Path: "/proc/1/root/etc/hostname", Follow: true}); err == nil {
		t.Fatal("stat through /proc/1/root")
	}
}

func TestProcesses(t *testing.T) {
	e := newEnv(t, nil)
	inst := e.create(e.config())
	g := inst.Guest()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := g.StartProcess(ctx, guestapi.ProcessStartRequest{Argv: []string{"sleep", "300"}, Tag: "sleeper"})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	list, err := g.ListProcesses(ctx)
	if err != nil || len(list) != 1 || list[0].Tag != "sleeper" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := g.KillProcess(ctx, p.ID); err != nil {
		t.Fatalf("kill: %v", err)
	}
	done, err := g.WaitProcess(ctx, p.ID, 10*time.Second)
	if err != nil || done.State == "running" {
		t.Fatalf("after kill: %+v %v", done, err)
	}
	// A terminal: the shell sees a tty.
	pty, err := g.StartProcess(ctx, guestapi.ProcessStartRequest{Argv: []string{"sh", "-c", "tty; stty size"},
		PTY: &guestapi.PTYSize{Rows: 40, Cols: 100}})
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	var out bytes.Buffer
	if _, err := g.ProcessOutput(ctx, pty.ID, guestapi.OutputOptions{Follow: true}, func(ev guestapi.OutputEvent) error {
		out.Write(ev.Data)
		return nil
	}); err != nil {
		t.Fatalf("output: %v", err)
	}
	if !strings.Contains(out.String(), "/dev/pts/") || !strings.Contains(out.String(), "40 100") {
		t.Fatalf("pty output %q", out.String())
	}
}
