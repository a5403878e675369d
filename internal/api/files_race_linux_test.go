//go:build linux

package api_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// The racer: this test binary, copied into a sandbox and started with
// PADDOCK_FILES_RACER=DIR, swaps DIR/d (a directory) and DIR/l (a symlink)
// with renameat2(RENAME_EXCHANGE) until DIR/stop appears.
func init() {
	dir := os.Getenv("PADDOCK_FILES_RACER")
	if dir == "" {
		return
	}
	d, l := filepath.Join(dir, "d"), filepath.Join(dir, "l")
	_ = os.WriteFile(filepath.Join(dir, "started"), nil, 0o644)
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; ; i++ {
		_ = unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE)
		if i%256 == 0 {
			if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil || time.Now().After(deadline) {
				os.Exit(0)
			}
		}
	}
}

// TestFilesRenameExchangeRace: while a workload swaps a directory and a
// symlink to a host directory in a tight loop, the API writes and
// extracts into the directory's path. No write ever lands on the host:
// the symlink resolves in the sandbox's root. Positive control: on the
// host, a write to the same path after the same swap lands in the canary.
func TestFilesRenameExchangeRace(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{MemoryMB: 1024, DiskMB: 512}).ID
	ctx := context.Background()
	canary, err := os.MkdirTemp("", "pdk-canary-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(canary)

	// Positive control first: natively the swapped path writes the canary.
	native := t.TempDir()
	os.Mkdir(filepath.Join(native, "d"), 0o755)
	os.Symlink(canary, filepath.Join(native, "l"))
	if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(native, "d"), unix.AT_FDCWD, filepath.Join(native, "l"), unix.RENAME_EXCHANGE); err != nil {
		t.Fatalf("positive control: renameat2: %v", err)
	}
	if err := os.WriteFile(filepath.Join(native, "d", "landed"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(canary, "landed")); err != nil {
		t.Fatalf("positive control: the native write did not reach the canary: %v", err)
	}
	os.Remove(filepath.Join(canary, "landed"))

	// In the sandbox: the same layout; the canary's path also exists there
	// (an ordinary sandbox directory), so writes through the link succeed
	// and are seen to go to the sandbox's copy.
	sh(t, e, id, "mkdir -p /workspace/race/d "+canary+" && ln -s "+canary+" /workspace/race/l")
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := self.Stat()
	if _, err := e.Client.WriteFile(ctx, id, client.WriteRequest{Path: "/workspace/racer", Mode: "0755"}, self, st.Size()); err != nil {
		t.Fatal(err)
	}
	self.Close()
	racerDone := make(chan error, 1)
	go func() {
		res, err := e.Client.Exec(ctx, id, client.ExecRequest{Cmd: []string{"/workspace/racer"},
			Env: map[string]string{"PADDOCK_FILES_RACER": "/workspace/race"}, TimeoutMs: 180_000})
		if err == nil && res.ExitCode != 0 {
			err = errString("racer exit " + strconv.Itoa(res.ExitCode) + ": " + res.Stderr)
		}
		racerDone <- err
	}()
	for start := time.Now(); ; {
		if _, err := e.Client.StatFile(ctx, id, client.StatRequest{Path: "/workspace/race/started"}); err == nil {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatal("the racer did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}

	tarball := buildTar(t, []tarEntry{{name: "sub/file"}})
	var ok, failed int
	for i := 0; i < 400; i++ {
		var err error
		if i%4 == 3 {
			_, err = e.Client.UploadArchive(ctx, id, client.ExtractRequest{Path: "/workspace/race/d/x" + strconv.Itoa(i)}, bytes.NewReader(tarball), int64(len(tarball)))
		} else {
			_, err = e.Client.WriteFile(ctx, id, client.WriteRequest{Path: "/workspace/race/d/f" + strconv.Itoa(i)}, strings.NewReader("x"), 1)
		}
		if err != nil {
			failed++ // a component vanished mid-swap: a clean error
		} else {
			ok++
		}
	}
	if _, err := e.Client.WriteFile(ctx, id, client.WriteRequest{Path: "/workspace/race/stop"}, strings.NewReader(""), 0); err != nil {
		t.Fatal(err)
	}
	if err := <-racerDone; err != nil {
		t.Fatalf("racer: %v", err)
	}
	if ents, _ := os.ReadDir(canary); len(ents) != 0 {
		t.Fatalf("writes landed on the host: %v", ents)
	}
	// Where the writes went, inside the sandbox.
	inLink := strings.Count(sh(t, e, id, "ls -A "+canary), "\n")
	inDir := strings.Count(sh(t, e, id, "ls -A /workspace/race/d /workspace/race/l 2>/dev/null | grep -v : || true"), "\n")
	t.Logf("%d writes succeeded (%d failed cleanly); the sandbox's copy of the canary path holds %d entries", ok, failed, inLink)
	if ok == 0 || inLink+inDir == 0 {
		t.Fatalf("the race did not exercise anything (ok %d, in link %d, in dir %d)", ok, inLink, inDir)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
