//go:build linux

package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// These tests run the guest's file service on the host (the host's root
// plays the sandbox's), through the real guestapi client on a Unix socket.

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: switches filesystem ids, mounts a small tmpfs")
	}
}

// startFiles serves the file service on a Unix socket and returns a client.
func startFiles(t testing.TB) *guestapi.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	m := rpc.NewMux()
	New(func(f string, a ...any) { t.Logf(f, a...) }).Register(m)
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	c := guestapi.NewClient(filepath.Join(dir, "s"))
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code errs.Code, inMsg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := errs.CodeOf(err); got != code {
		t.Fatalf("code = %s (%v), want %s", got, err, code)
	}
	if inMsg != "" && !strings.Contains(errs.Public(err), inMsg) {
		t.Fatalf("message %q does not mention %q", errs.Public(err), inMsg)
	}
}

func readAll(t *testing.T, c *guestapi.Client, r guestapi.ReadRequest) (string, *guestapi.FileReader) {
	t.Helper()
	fr, err := c.ReadFile(context.Background(), r)
	if err != nil {
		t.Fatalf("read %+v: %v", r, err)
	}
	defer fr.Body.Close()
	b, err := io.ReadAll(fr.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), fr
}

func write(t *testing.T, c *guestapi.Client, p, content string) guestapi.FileInfo {
	t.Helper()
	fi, err := c.WriteFile(context.Background(), guestapi.WriteRequest{Path: p}, strings.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	return fi
}

// noTemps fails if dir holds a leftover temporary file of a write. A
// client that hangs up sees its error before the agent has cleaned up, so
// this waits for the cleanup (with a hang guard).
func noTemps(t *testing.T, dir string) {
	t.Helper()
	guard := time.Now().Add(30 * time.Second)
	for {
		var left []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".paddock-") {
				left = append(left, e.Name())
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(guard) {
			t.Fatalf("temporary files left behind: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReadWriteRanges(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	p := filepath.Join(d, "f.txt")
	fi := write(t, c, p, "0123456789")
	if fi.Size != 10 || fi.Type != guestapi.TypeFile || fi.Mode != "0644" {
		t.Fatalf("write info %+v", fi)
	}
	for _, tc := range []struct {
		name string
		req  guestapi.ReadRequest
		want string
		off  int64
	}{
		{"whole", guestapi.ReadRequest{}, "0123456789", 0},
		{"offset", guestapi.ReadRequest{Offset: 7}, "789", 7},
		{"offset+length", guestapi.ReadRequest{Offset: 2, Length: 3}, "234", 2},
		{"length past end", guestapi.ReadRequest{Offset: 8, Length: 100}, "89", 8},
		{"offset at end", guestapi.ReadRequest{Offset: 10}, "", 10},
		{"suffix", guestapi.ReadRequest{Suffix: 4}, "6789", 6},
		{"suffix over size", guestapi.ReadRequest{Suffix: 40}, "0123456789", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Path = p
			got, fr := readAll(t, c, tc.req)
			if got != tc.want || fr.Size != 10 || fr.Offset != tc.off || fr.Length != int64(len(tc.want)) {
				t.Fatalf("got %q size %d off %d len %d", got, fr.Size, fr.Offset, fr.Length)
			}
		})
	}
	_, err := c.ReadFile(ctx, guestapi.ReadRequest{Path: p, Offset: 11})
	re, ok := guestapi.IsRange(err)
	if !ok || re.Size != 10 {
		t.Fatalf("read past end: %v, want a RangeError with size 10", err)
	}
	wantCode(t, err, errs.CodeInvalid, "past the end")

	// Overwrite keeps the mode; mode sets it; parents creates the directory.
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if fi := write(t, c, p, "new"); fi.Mode != "0600" || fi.Size != 3 {
		t.Fatalf("overwrite info %+v", fi)
	}
	fi, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "a/b/c"), Parents: true, Mode: "0750"}, strings.NewReader("x"), 1)
	if err != nil || fi.Mode != "0750" {
		t.Fatalf("write with parents: %+v %v", fi, err)
	}
	_, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "x/y")}, strings.NewReader("x"), 1)
	wantCode(t, err, errs.CodeNotFound, "parent")
	_, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "s"), Mode: "4755"}, strings.NewReader("x"), 1)
	wantCode(t, err, errs.CodeInvalid, "setuid")
	_, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: d}, strings.NewReader("x"), 1)
	wantCode(t, err, errs.CodeInvalid, "directory")
	// Unknown-length bodies (chunked) and empty bodies.
	if _, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "chunked")}, io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")), -1); err != nil {
		t.Fatal(err)
	}
	if got, _ := readAll(t, c, guestapi.ReadRequest{Path: filepath.Join(d, "chunked")}); got != "abcd" {
		t.Fatalf("chunked = %q", got)
	}
	if fi := write(t, c, filepath.Join(d, "empty"), ""); fi.Size != 0 {
		t.Fatalf("empty %+v", fi)
	}
	// Writing through a symlink writes its target.
	if err := os.Symlink("f.txt", filepath.Join(d, "ln")); err != nil {
		t.Fatal(err)
	}
	write(t, c, filepath.Join(d, "ln"), "via link")
	if b, _ := os.ReadFile(p); string(b) != "via link" {
		t.Fatalf("target = %q", b)
	}
	if st, _ := os.Lstat(filepath.Join(d, "ln")); st.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
	noTemps(t, d)
}

// TestReadRefusesSpecialFiles: a FIFO, a device, a socket and a directory
// are refused at once. Positive control: natively, reading the FIFO waits
// for a writer and then returns what it wrote — the hang the API avoids.
func TestReadRefusesSpecialFiles(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	d := t.TempDir()
	fifo := filepath.Join(d, "fifo")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(d, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	done := make(chan error, 1)
	go func() {
		_, err := c.ReadFile(context.Background(), guestapi.ReadRequest{Path: fifo})
		done <- err
	}()
	select {
	case err := <-done:
		wantCode(t, err, errs.CodeInvalid, "FIFO")
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatal("reading a FIFO through the API hung")
	}

	native := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until a writer opens it
		native <- string(b)
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("from a writer")
	w.Close()
	if got := <-native; got != "from a writer" {
		t.Fatalf("native FIFO read = %q", got)
	}

	for _, tc := range []struct{ p, msg string }{
		{"/dev/null", "character device"}, {sock, "socket"}, {d, "directory"},
	} {
		_, err := c.ReadFile(context.Background(), guestapi.ReadRequest{Path: tc.p})
		wantCode(t, err, errs.CodeInvalid, tc.msg)
	}
	if _, err := os.ReadFile("/dev/null"); err != nil {
		t.Fatalf("positive control: /dev/null natively: %v", err)
	}
}

// failingReader yields n bytes, then an error: a client that went away.
type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("connection reset")
	}
	k := min(len(p), f.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	f.n -= k
	return k, nil
}

// TestWriteAtomic: an upload cut short, over its cap, or over a full disk
// leaves the old content (or nothing) at the path and no temporary file.
// Positive control: a naive write to the same full disk leaves a partial
// file that looks like a complete one.
func TestWriteAtomic(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	if err := unix.Mount("tmpfs", d, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	defer unix.Unmount(d, unix.MNT_DETACH)
	p := filepath.Join(d, "target")
	write(t, c, p, "old content")

	// Disk full mid-upload.
	big := int64(3 << 20)
	_, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: p}, io.LimitReader(zeros{}, big), big)
	wantCode(t, err, errs.CodeTooLarge, "disk is full")
	if b, _ := os.ReadFile(p); string(b) != "old content" {
		t.Fatalf("after a full disk the target holds %d bytes", len(b))
	}
	_, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "new")}, io.LimitReader(zeros{}, big), big)
	wantCode(t, err, errs.CodeTooLarge, "disk is full")
	if _, err := os.Lstat(filepath.Join(d, "new")); !os.IsNotExist(err) {
		t.Fatalf("a failed new file exists: %v", err)
	}
	noTemps(t, d)
	// Positive control: the naive way leaves a partial file.
	naive := filepath.Join(d, "naive")
	if err := os.WriteFile(naive, make([]byte, big), 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("positive control: naive write err = %v, want ENOSPC", err)
	}
	if st, err := os.Stat(naive); err != nil || st.Size() == 0 {
		t.Fatalf("positive control: naive partial file: %v", err)
	}
	os.Remove(naive)

	// Cap reached, and a body that breaks off.
	_, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: p, MaxBytes: 100}, strings.NewReader(strings.Repeat("y", 200)), -1)
	wantCode(t, err, errs.CodeTooLarge, "limit of 100 bytes")
	_, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: p}, &failingReader{n: 5000}, -1)
	if err == nil {
		t.Fatal("a broken body was accepted")
	}
	if b, _ := os.ReadFile(p); string(b) != "old content" {
		t.Fatalf("after failures the target holds %q", b)
	}
	noTemps(t, d)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestStatListMkdirMoveRemove(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	fi, err := c.Mkdir(ctx, guestapi.MkdirRequest{Path: filepath.Join(d, "a/b/c"), Parents: true, Mode: "0700"})
	must(err)
	if fi.Type != guestapi.TypeDir || fi.Mode != "0700" {
		t.Fatalf("mkdir %+v", fi)
	}
	_, err = c.Mkdir(ctx, guestapi.MkdirRequest{Path: filepath.Join(d, "a/b/c"), Parents: true})
	must(err) // like mkdir -p: no error when it exists
	_, err = c.Mkdir(ctx, guestapi.MkdirRequest{Path: filepath.Join(d, "a/b/c")})
	wantCode(t, err, errs.CodeConflict, "exists")
	_, err = c.Mkdir(ctx, guestapi.MkdirRequest{Path: filepath.Join(d, "q/r")})
	wantCode(t, err, errs.CodeNotFound, "parent")

	write(t, c, filepath.Join(d, "a/f1"), "1")
	write(t, c, filepath.Join(d, "a/b/f2"), "22")
	must(os.Symlink("/nonexistent/target", filepath.Join(d, "a/sl")))
	must(unix.Mkfifo(filepath.Join(d, "a/fifo"), 0o644))

	st, err := c.Stat(ctx, guestapi.StatRequest{Path: filepath.Join(d, "a/sl")})
	must(err)
	if st.Type != guestapi.TypeSymlink || st.Target != "/nonexistent/target" || st.Name != "sl" {
		t.Fatalf("stat symlink %+v", st)
	}
	_, err = c.Stat(ctx, guestapi.StatRequest{Path: filepath.Join(d, "a/sl"), Follow: true})
	wantCode(t, err, errs.CodeNotFound, "")

	res, err := c.List(ctx, guestapi.ListRequest{Path: filepath.Join(d, "a")})
	must(err)
	var names []string
	for _, e := range res.Entries {
		names = append(names, e.Name+":"+e.Type)
	}
	if got := strings.Join(names, " "); got != "b:dir f1:file fifo:other sl:symlink" {
		t.Fatalf("list depth 1 = %s", got)
	}
	res, err = c.List(ctx, guestapi.ListRequest{Path: filepath.Join(d, "a"), Depth: 3})
	must(err)
	names = nil
	for _, e := range res.Entries {
		rel, _ := filepath.Rel(d, e.Path)
		names = append(names, rel)
	}
	if got := strings.Join(names, " "); got != "a/b a/b/c a/b/f2 a/f1 a/fifo a/sl" || res.Truncated {
		t.Fatalf("list depth 3 = %s (truncated %v)", got, res.Truncated)
	}
	res, err = c.List(ctx, guestapi.ListRequest{Path: filepath.Join(d, "a"), Depth: 3, Limit: 2})
	must(err)
	if len(res.Entries) != 2 || !res.Truncated {
		t.Fatalf("list with limit: %d entries, truncated %v", len(res.Entries), res.Truncated)
	}

	// Move: no overwrite by default; overwrite on request; a symlink moves
	// as itself.
	write(t, c, filepath.Join(d, "a/f3"), "3")
	_, err = c.Move(ctx, guestapi.MoveRequest{From: filepath.Join(d, "a/f3"), To: filepath.Join(d, "a/f1")})
	wantCode(t, err, errs.CodeConflict, "overwrite")
	fi, err = c.Move(ctx, guestapi.MoveRequest{From: filepath.Join(d, "a/f3"), To: filepath.Join(d, "a/f1"), Overwrite: true})
	must(err)
	if b, _ := os.ReadFile(filepath.Join(d, "a/f1")); string(b) != "3" || fi.Name != "f1" {
		t.Fatalf("after move f1 = %q, %+v", b, fi)
	}
	_, err = c.Move(ctx, guestapi.MoveRequest{From: filepath.Join(d, "a/sl"), To: filepath.Join(d, "moved/sl"), Parents: true})
	must(err)
	if l, _ := os.Readlink(filepath.Join(d, "moved/sl")); l != "/nonexistent/target" {
		t.Fatalf("moved symlink -> %q", l)
	}
	_, err = c.Move(ctx, guestapi.MoveRequest{From: filepath.Join(d, "a"), To: filepath.Join(d, "a/b/x")})
	wantCode(t, err, errs.CodeInvalid, "into itself")

	// Remove never follows symlinks: a link to a directory outside goes,
	// the directory stays; recursive removal does not descend through one.
	outside := t.TempDir()
	write(t, c, filepath.Join(outside, "keep"), "keep")
	must(os.Symlink(outside, filepath.Join(d, "a/b/out")))
	_, err = c.Remove(ctx, guestapi.RemoveRequest{Path: filepath.Join(d, "a")})
	wantCode(t, err, errs.CodeConflict, "recursive")
	rr, err := c.Remove(ctx, guestapi.RemoveRequest{Path: filepath.Join(d, "a"), Recursive: true})
	must(err)
	if rr.Removed != 7 { // a, a/b, a/b/c, a/b/f2, a/b/out, a/f1, a/fifo
		t.Errorf("removed %d entries, want 7", rr.Removed)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Fatalf("recursive remove followed a symlink: %v", err)
	}
	must(os.Symlink(outside, filepath.Join(d, "ol")))
	_, err = c.Remove(ctx, guestapi.RemoveRequest{Path: filepath.Join(d, "ol"), Recursive: true})
	must(err)
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Fatalf("removing a symlink removed its target: %v", err)
	}
	_, err = c.Remove(ctx, guestapi.RemoveRequest{Path: "/", Recursive: true})
	wantCode(t, err, errs.CodeInvalid, "refusing")
	// A mount below is not crossed.
	m := filepath.Join(d, "m/inner")
	must(os.MkdirAll(m, 0o755))
	must(unix.Mount("tmpfs", m, "tmpfs", 0, "size=64k"))
	defer unix.Unmount(m, unix.MNT_DETACH)
	_, err = c.Remove(ctx, guestapi.RemoveRequest{Path: filepath.Join(d, "m"), Recursive: true})
	wantCode(t, err, errs.CodeInvalid, "mount point")
}

// TestAgentProcGuard: the agent's own /proc entries are refused (they
// would expose its memory and descriptors); other /proc files read fine.
// Positive control: natively the process reads its own environ.
func TestAgentProcGuard(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	for _, p := range []string{"/proc/self/environ", "/proc/thread-self/status", "/proc/" + strconv.Itoa(os.Getpid()) + "/maps"} {
		_, err := c.ReadFile(ctx, guestapi.ReadRequest{Path: p})
		wantCode(t, err, errs.CodeForbidden, "agent")
	}
	_, err := c.List(ctx, guestapi.ListRequest{Path: "/proc/self/fd"})
	wantCode(t, err, errs.CodeForbidden, "agent")
	// Magic links are not followed even when the guard would allow the
	// directory: /proc/PID/root of another process.
	_, err = c.ReadFile(ctx, guestapi.ReadRequest{Path: "/proc/1/root/etc/hostname"})
	if err == nil {
		t.Fatal("read through a /proc magic link")
	}
	if got, _ := readAll(t, c, guestapi.ReadRequest{Path: "/proc/version"}); !strings.HasPrefix(got, "Linux") {
		t.Fatalf("/proc/version = %q", got)
	}
	if b, err := os.ReadFile("/proc/self/environ"); err != nil || len(b) == 0 {
		t.Fatalf("positive control: natively /proc/self/environ: %v", err)
	}
}

// TestAsUser: as "user", the kernel checks the user's permissions and new
// files belong to uid 1000. Positive control: the same writes as root
// succeed, so the refusal comes from the user.ID switch.
func TestAsUser(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(d, "home"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(d, "home"), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(d, "secret")
	if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "f"), User: "user"}, strings.NewReader("x"), 1)
	wantCode(t, err, errs.CodeForbidden, "permission denied")
	_, err = c.ReadFile(ctx, guestapi.ReadRequest{Path: secret, User: "user"})
	wantCode(t, err, errs.CodeForbidden, "permission denied")
	_, err = c.Remove(ctx, guestapi.RemoveRequest{Path: secret, User: "user"})
	wantCode(t, err, errs.CodeForbidden, "permission denied")
	fi, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "home/mine"), User: "user"}, strings.NewReader("x"), 1)
	if err != nil || fi.UID != 1000 || fi.GID != 1000 {
		t.Fatalf("user write: %+v %v", fi, err)
	}
	fi, err = c.Mkdir(ctx, guestapi.MkdirRequest{Path: filepath.Join(d, "home/sub"), User: "user"})
	if err != nil || fi.UID != 1000 {
		t.Fatalf("user mkdir: %+v %v", fi, err)
	}
	// Positive control: root may.
	if _, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "f")}, strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if got, _ := readAll(t, c, guestapi.ReadRequest{Path: secret}); got != "root only" {
		t.Fatalf("root read %q", got)
	}
	// Root overwriting the user's file keeps its owner.
	fi = write(t, c, filepath.Join(d, "home/mine"), "root wrote")
	if fi.UID != 1000 {
		t.Fatalf("owner after root's overwrite = %d", fi.UID)
	}
	// The user.ID never leaks: after user requests, root can still do
	// everything (threads with the user's ids were discarded).
	for i := 0; i < 20; i++ {
		_, _ = c.Stat(ctx, guestapi.StatRequest{Path: secret, User: "user"})
	}
	for i := 0; i < 20; i++ {
		if _, err := c.Stat(ctx, guestapi.StatRequest{Path: filepath.Join(d, "home/mine")}); err != nil {
			t.Fatal(err)
		}
		if got, _ := readAll(t, c, guestapi.ReadRequest{Path: secret}); got != "root only" {
			t.Fatalf("root read after user requests: %q", got)
		}
	}
	_, err = c.Stat(ctx, guestapi.StatRequest{Path: d, User: "nobody"})
	wantCode(t, err, errs.CodeInvalid, "unknown user")

	// A large directory is examined by several threads, each as the user.
	big := filepath.Join(d, "home/big")
	if err := os.MkdirAll(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < parallelStat+500; i++ {
		os.WriteFile(filepath.Join(big, strconv.Itoa(i)), nil, 0o644)
	}
	res, err := c.List(ctx, guestapi.ListRequest{Path: big, User: "user"})
	if err != nil || len(res.Entries) != parallelStat+500 || res.Truncated {
		t.Fatalf("large list as user: %d entries, %v", len(res.Entries), err)
	}
	if err := os.Chmod(big, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = c.List(ctx, guestapi.ListRequest{Path: big, User: "user"})
	wantCode(t, err, errs.CodeForbidden, "permission denied")
	res, err = c.List(ctx, guestapi.ListRequest{Path: big, Limit: 100})
	if err != nil || len(res.Entries) != 100 || !res.Truncated {
		t.Fatalf("large list with a limit: %d entries, truncated %v, %v", len(res.Entries), res.Truncated, err)
	}
}

func TestEdit(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	p := filepath.Join(d, "e.go")
	write(t, c, p, "a\nb\nb\nc\n")
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err := c.Edit(ctx, guestapi.EditRequest{Path: p, OldString: "b\n", NewString: "B\n"})
	wantCode(t, err, errs.CodeConflict, "occurs 2 times")
	_, err = c.Edit(ctx, guestapi.EditRequest{Path: p, OldString: "zzz", NewString: "y"})
	wantCode(t, err, errs.CodeNotFound, "does not occur")
	res, err := c.Edit(ctx, guestapi.EditRequest{Path: p, OldString: "a\n", NewString: "A\n"})
	if err != nil || res.Replacements != 1 || res.File.Mode != "0640" {
		t.Fatalf("edit: %+v %v", res, err)
	}
	res, err = c.Edit(ctx, guestapi.EditRequest{Path: p, OldString: "b", NewString: "x", ReplaceAll: true})
	if err != nil || res.Replacements != 2 {
		t.Fatalf("replace_all: %+v %v", res, err)
	}
	if _, err := c.Edit(ctx, guestapi.EditRequest{Path: p, StartLine: 2, EndLine: 3, Content: "two\nthree"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "A\ntwo\nthree\nc\n" {
		t.Fatalf("after edits: %q", b)
	}
	_, err = c.Edit(ctx, guestapi.EditRequest{Path: p, StartLine: 9, EndLine: 9, Content: "x"})
	wantCode(t, err, errs.CodeInvalid, "past the end")
	_, err = c.Edit(ctx, guestapi.EditRequest{Path: "/dev/null", OldString: "x"})
	wantCode(t, err, errs.CodeInvalid, "not a regular file")
	noTemps(t, d)
}

func TestReplaceLines(t *testing.T) {
	for _, tc := range []struct {
		in         string
		start, end int
		content    string
		want       string
		bad        bool
	}{
		{"a\nb\nc\n", 2, 2, "B", "a\nB\nc\n", false},
		{"a\nb\nc\n", 1, 3, "x\n", "x\n", false},
		{"a\nb\nc\n", 2, 1, "ins", "a\nins\nb\nc\n", false}, // insert before 2
		{"a\nb\nc\n", 4, 3, "end", "a\nb\nc\nend\n", false}, // append
		{"a\nb\nc", 3, 3, "C", "a\nb\nC", false},            // unterminated last line stays so
		{"a\nb\nc", 4, 3, "d", "a\nb\nc\nd\n", false},       // append after an unterminated line
		{"a\nb\nc\n", 2, 3, "", "a\n", false},               // delete
		{"", 1, 0, "first", "first\n", false},               // empty file
		{"a\n", 3, 3, "x", "", true},                        // past the end
		{"a\nb\n", 2, 0, "x", "", true},                     // end before start-1
		{"a\nb\n", 1, 3, "x", "", true},                     // end past the end
	} {
		got, err := replaceLines([]byte(tc.in), tc.start, tc.end, tc.content, "f")
		if tc.bad {
			if err == nil {
				t.Errorf("replaceLines(%q, %d, %d) = %q, want an error", tc.in, tc.start, tc.end, got)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("replaceLines(%q, %d, %d, %q) = %q, %v; want %q", tc.in, tc.start, tc.end, tc.content, got, err, tc.want)
		}
	}
}

// FuzzReplaceLines: never panics; a successful edit keeps the text before
// the range and after it.
func FuzzReplaceLines(f *testing.F) {
	f.Add("a\nb\nc\n", 2, 2, "B")
	f.Add("", 1, 0, "x")
	f.Add("no newline", 1, 1, "")
	f.Add("\n\n\n", 3, 2, "x\ny")
	f.Fuzz(func(t *testing.T, in string, start, end int, content string) {
		if start < 1 || start > 1000 || end > 1000 {
			return
		}
		out, err := replaceLines([]byte(in), start, end, content, "f")
		if err != nil {
			return
		}
		lines := strings.SplitAfter(in, "\n")
		prefix := strings.Join(lines[:min(start-1, len(lines))], "")
		if !bytes.HasPrefix(out, []byte(prefix)) {
			t.Fatalf("lines before %d changed: %q -> %q", start, in, out)
		}
	})
}
