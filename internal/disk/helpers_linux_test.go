//go:build linux

package disk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sandboxUID is the unprivileged host uid the tests write as, like a
// sandbox's mapped root.
const sandboxUID = 100000

const helperEnv = "PADDOCK_DISK_TEST_HELPER"

// helperDir holds a copy of the test binary that sandboxUID can execute
// (the go build cache is private to root).
var helperDir string

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain(os.Args[1:]))
	}
	code := m.Run()
	if helperDir != "" {
		os.RemoveAll(helperDir)
	}
	os.Exit(code)
}

// helperMain runs inside a child process started by runHelper. It reports
// "n=<count> err=<errno name or none>".
func helperMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: write PATH BYTES | files DIR MAX")
		return 2
	}
	limit, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var n int64
	switch args[0] {
	case "write":
		n, err = writeLoop(args[1], limit)
	case "files":
		n, err = createLoop(args[1], limit)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper command", args[0])
		return 2
	}
	fmt.Printf("n=%d err=%s\n", n, errnoName(err))
	return 0
}

func errnoName(err error) string {
	if err == nil {
		return "none"
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return strings.ReplaceAll(err.Error(), " ", "_")
}

// writeLoop writes up to limit bytes to path in 64 KiB chunks, then fsyncs.
func writeLoop(path string, limit int64) (int64, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	chunk := bytes.Repeat([]byte{0xa5}, 64<<10)
	var n int64
	for n < limit {
		w, err := unix.Write(fd, chunk[:min(int64(len(chunk)), limit-n)])
		n += int64(max(w, 0))
		if err != nil {
			return n, err
		}
	}
	return n, unix.Fsync(fd)
}

// createLoop creates up to limit empty files in dir.
func createLoop(dir string, limit int64) (int64, error) {
	var n int64
	for ; n < limit; n++ {
		fd, err := unix.Open(filepath.Join(dir, "f"+strconv.FormatInt(n, 10)), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return n, err
		}
		unix.Close(fd)
	}
	return n, nil
}

type helperResult struct {
	n     int64
	errno string
}

// runHelper runs the test binary's helper mode as uid.
func runHelper(t *testing.T, uid int, args ...string) helperResult {
	t.Helper()
	bin := helperBinary(t)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper %v: %v: %s", args, err, stderr.String())
	}
	var r helperResult
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "n=%d err=%s", &r.n, &r.errno); err != nil {
		t.Fatalf("helper %v output %q: %v", args, out, err)
	}
	return r
}

func helperBinary(t *testing.T) string {
	t.Helper()
	if helperDir == "" {
		d, err := os.MkdirTemp("", "disk-helper-")
		if err != nil {
			t.Fatal(err)
		}
		helperDir = d
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		src, err := os.Open(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dst, err := os.OpenFile(filepath.Join(d, "helper"), os.O_WRONLY|os.O_CREATE, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(helperDir, "helper")
}

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (mounts, loop devices, quotactl, chown)")
	}
}

func requireXFS(t testing.TB) {
	t.Helper()
	requireRoot(t)
	if _, err := exec.LookPath("mkfs.xfs"); err != nil {
		t.Skip("mkfs.xfs not installed (Debian: apt-get install xfsprogs)")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop devices: %v", err)
	}
}

// storeDir returns a fresh directory that sandboxUID can traverse (as a
// real data directory must be: 0711 down to the layers).
func storeDir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	for p := d; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// openTestXFS opens an XFS store in a fresh directory and guarantees that
// the mount and loop device are gone when the test ends, even if it fails
// half-way.
func openTestXFS(t testing.TB, dir string) *xfsStore {
	t.Helper()
	t.Cleanup(func() { forceCleanup(t, dir) })
	s, err := openXFS(Options{Dir: dir, ImageSize: MinImageSize}, testXFSConfig(t, dir))
	if err != nil {
		t.Fatalf("OpenXFS: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*xfsStore)
}

// forceCleanup detaches whatever is still mounted at dir/mnt and any loop
// device still backed by dir/layers.img.
func forceCleanup(t testing.TB, dir string) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return
	}
	mnt := filepath.Join(dir, mountName)
	for range 8 {
		if !isMounted(t, mnt) {
			break
		}
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Logf("cleanup: unmount %s: %v", mnt, err)
			break
		}
	}
	for _, dev := range loopDevsFor(filepath.Join(dir, imageName)) {
		fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if err := unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
			t.Logf("cleanup: detach %s: %v", dev, err)
		}
		unix.Close(fd)
	}
}

// loopDevsFor lists the loop devices backed by image (from sysfs).
func loopDevsFor(image string) []string {
	paths, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == image {
			out = append(out, "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(p))))
		}
	}
	return out
}

func mountsAt(t testing.TB, path string) []mountEntry {
	t.Helper()
	ms, err := readMountinfo()
	if err != nil {
		t.Fatal(err)
	}
	var out []mountEntry
	for _, m := range ms {
		if m.MountPoint == path {
			out = append(out, m)
		}
	}
	return out
}

func isMounted(t testing.TB, path string) bool { return len(mountsAt(t, path)) > 0 }

// waitFor polls cond (for state the kernel updates asynchronously, such as
// autoclear detaching a loop device); it is not a timing assertion.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustWriteFile(t testing.TB, path string, size int) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), size), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fakeQuota stands in for quotactl on kernels whose XFS has no quota
// support: it records limits (and reports no usage), so every other part
// of the XFS store still runs against a real XFS image.
type fakeQuota struct {
	mu     sync.Mutex
	limits map[uint32]Usage
}

func (f *fakeQuota) setLimits(id uint32, bytes, inodes int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if bytes == 0 && inodes == 0 {
		delete(f.limits, id)
		return nil
	}
	f.limits[id] = Usage{BytesLimit: (bytes + 511) / 512 * 512, InodesLimit: inodes}
	return nil
}

func (f *fakeQuota) get(id uint32) (Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.limits[id], nil
}

var (
	quotaOnce   sync.Once
	quotaReason string // why real XFS quotas are unavailable; "" if they work
)

// xfsQuotaReason probes, once, whether this kernel's XFS enforces project
// quotas.
func xfsQuotaReason(t testing.TB) string {
	t.Helper()
	quotaOnce.Do(func() {
		dir, err := os.MkdirTemp("", "disk-probe-")
		if err != nil {
			quotaReason = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		defer forceCleanup(t, dir)
		s, err := OpenXFS(Options{Dir: dir, ImageSize: MinImageSize})
		if err != nil {
			quotaReason = err.Error()
			return
		}
		s.Close()
	})
	return quotaReason
}

// requireXFSQuota skips tests of quota enforcement itself on kernels that
// cannot enforce XFS project quotas.
func requireXFSQuota(t testing.TB) {
	t.Helper()
	requireXFS(t)
	if r := xfsQuotaReason(t); r != "" {
		t.Skipf("XFS project quotas unavailable on this kernel: %s", r)
	}
}

// testXFSConfig returns the real configuration where the kernel enforces
// XFS quotas, else one that mounts without quotas and records limits in a
// fake shared by every store opened on dir.
func testXFSConfig(t testing.TB, dir string) xfsConfig {
	t.Helper()
	if xfsQuotaReason(t) == "" {
		return defaultXFSConfig
	}
	fakesMu.Lock()
	defer fakesMu.Unlock()
	f := fakes[dir]
	if f == nil {
		f = &fakeQuota{limits: map[uint32]Usage{}}
		fakes[dir] = f
	}
	return xfsConfig{
		mountOpts: "",
		superOpt:  "noquota",
		quota:     func(int, string) quotaOps { return f },
	}
}

var (
	fakesMu sync.Mutex
	fakes   = map[string]*fakeQuota{}
)

func realQuota(t testing.TB) bool { return xfsQuotaReason(t) == "" }
