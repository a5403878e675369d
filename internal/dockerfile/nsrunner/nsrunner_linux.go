package nsrunner

import (
	"context"
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
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/errs"
)

const (
	childEnv  = "PADDOCK_NSRUNNER_CHILD"
	configEnv = "PADDOCK_NSRUNNER_CONFIG"
	idRange   = 65536
	// Host id ranges for runs: far above any real user, one per run.
	idBaseStart = 1 << 30
)

var runSeq atomic.Uint32

// Runner runs RUN steps in namespaces.
type Runner struct{}

type childConfig struct {
	Dir     string   // the run's directory: l0..lN mount points, work, merged
	Lowers  int      // number of lower mount points
	Cmd     []string // argv
	Env     []string
	WorkDir string
	UID     int
	GID     int
}

// Run implements dockerfile.Runner.
func (Runner) Run(ctx context.Context, req dockerfile.RunRequest) (dockerfile.RunResult, error) {
	if os.Geteuid() != 0 {
		return dockerfile.RunResult{}, errs.New(errs.CodeUnsupported, "the namespace runner needs root")
	}
	if req.Network != "none" && req.Network != "" {
		return dockerfile.RunResult{}, errs.New(errs.CodeUnsupported, "the namespace runner has no network: only --net none")
	}
	if len(req.Lowers) == 0 {
		return dockerfile.RunResult{}, errs.Invalid("RUN needs a base with files (FROM scratch has no shell)")
	}
	// A host id range of its own per run (49152 slots fit above 2^30).
	base := idBaseStart + ((os.Getpid()%768)*64+int(runSeq.Add(1)%64))*idRange
	dir, err := os.MkdirTemp("", "nsrunner-")
	if err != nil {
		return dockerfile.RunResult{}, err
	}
	defer os.RemoveAll(dir)
	// 0711: the runner's root (host uid base) must traverse it, not list it.
	if err := os.Chmod(dir, 0o711); err != nil {
		return dockerfile.RunResult{}, err
	}
	for i := range req.Lowers {
		if err := os.Mkdir(filepath.Join(dir, "l"+strconv.Itoa(i)), 0o755); err != nil {
			return dockerfile.RunResult{}, err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "merged"), 0o755); err != nil {
		return dockerfile.RunResult{}, err
	}
	if err := os.Mkdir(filepath.Join(dir, "rw"), 0o755); err != nil {
		return dockerfile.RunResult{}, err
	}
	// Upper and work must share a mount that exists in the helper's mount
	// namespace (overlayfs clones the upper's mount), under a path the
	// helper's unprivileged root can reach: rw sits beside req.Upper and is
	// bind-mounted into the helper's namespace at dir/rw.
	rw := req.Upper + ".rw"
	if err := os.Mkdir(rw, 0o755); err != nil {
		return dockerfile.RunResult{}, err
	}
	defer os.RemoveAll(rw)
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(rw, d), 0o755); err != nil {
			return dockerfile.RunResult{}, err
		}
		if err := os.Chown(filepath.Join(rw, d), base, base); err != nil {
			return dockerfile.RunResult{}, err
		}
	}
	cfg, _ := json.Marshal(childConfig{Dir: dir, Lowers: len(req.Lowers), Cmd: req.Cmd, Env: req.Env, WorkDir: req.WorkDir, UID: req.UID, GID: req.GID})
	gor, gow, err := os.Pipe()
	if err != nil {
		return dockerfile.RunResult{}, err
	}
	defer gor.Close()
	defer gow.Close()
	self, err := selfCopy()
	if err != nil {
		return dockerfile.RunResult{}, err
	}
	// The helper is executed from a memfd copy of this binary: its own
	// path may be in a directory the helper's unprivileged root cannot
	// search, and a file it could rewrite would be CVE-2019-5736.
	cmd := exec.Command("/proc/self/fd/5")
	cmd.Env = []string{childEnv + "=1", configEnv + "=" + string(cfg)}
	cmd.ExtraFiles = []*os.File{gor, self, self} // fd 3: go signal, fd 5: the helper
	cmd.Stdout, cmd.Stderr = req.Output, req.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: base, Size: idRange}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: base, Size: idRange}},
		GidMappingsEnableSetgroups: true,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0},
	}
	if err := cmd.Start(); err != nil {
		return dockerfile.RunResult{}, fmt.Errorf("start the namespace helper: %w", err)
	}
	gor.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	kill := func() { cmd.Process.Kill(); <-waited }
	if err := attachLowers(cmd.Process.Pid, req.Lowers, dir, rw); err != nil {
		kill()
		return dockerfile.RunResult{}, fmt.Errorf("attach layers: %w", err)
	}
	if _, err := gow.Write([]byte{1}); err != nil {
		kill()
		return dockerfile.RunResult{}, err
	}
	gow.Close()
	select {
	case err = <-waited:
	case <-ctx.Done():
		kill() // the helper is PID 1 of its namespace: everything in it dies
		return dockerfile.RunResult{}, ctx.Err()
	}
	res := dockerfile.RunResult{IDBase: base, IDRange: idRange}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		} else {
			res.ExitCode = ee.ExitCode()
		}
		if res.ExitCode == setupFailed {
			return res, fmt.Errorf("the namespace helper failed to set up")
		}
		err = nil
	}
	if err != nil {
		return res, err
	}
	// unix.Rename: os.Rename refuses an existing (empty) directory.
	if err := unix.Rename(filepath.Join(rw, "upper"), req.Upper); err != nil {
		return res, fmt.Errorf("collect the upper layer: %w", err)
	}
	removeStubs(req.Upper, req.Lowers)
	return res, nil
}

// attachLowers id-maps each layer directory into the helper's user
// namespace and mounts it at dir/l<i> inside the helper's mount
// namespace (overlayfs refuses lowers from the host's anonymous mount
// namespace, so the attach happens from a thread that joined the
// helper's).
func attachLowers(pid int, lowers []string, dir, rw string) error {
	userns, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(userns)
	var trees []int
	defer func() {
		for _, fd := range trees {
			unix.Close(fd)
		}
	}()
	for _, l := range lowers {
		fd, err := unix.OpenTree(unix.AT_FDCWD, l, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return fmt.Errorf("open_tree: %w", err)
		}
		trees = append(trees, fd)
		attr := unix.MountAttr{
			Attr_set:  unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV,
			Userns_fd: uint64(userns),
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
			return fmt.Errorf("id-map: %w", err)
		}
	}
	mntns, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(mntns)
	done := make(chan error, 1)
	go func() {
		// This thread joins another mount namespace and is never unlocked:
		// the Go runtime discards it when the goroutine ends.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			done <- err
			return
		}
		if err := unix.Setns(mntns, unix.CLONE_NEWNS); err != nil {
			done <- fmt.Errorf("join mount namespace: %w", err)
			return
		}
		for i, fd := range trees {
			if err := unix.MoveMount(fd, "", unix.AT_FDCWD, filepath.Join(dir, "l"+strconv.Itoa(i)), unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
				done <- fmt.Errorf("attach layer %d: %w", i, err)
				return
			}
		}
		if err := unix.Mount(rw, filepath.Join(dir, "rw"), "", unix.MS_BIND, ""); err != nil {
			done <- fmt.Errorf("bind the writable layer: %w", err)
			return
		}
		done <- nil
	}()
	return <-done
}

// removeStubs drops the empty mount points (/proc, /dev) that the
// helper had to create in the upper layer because the image lacked
// them: they are the runner's, not the build's.
func removeStubs(upper string, lowers []string) {
	for _, p := range []string{"proc", "dev"} {
		inImage := false
		for _, l := range lowers {
			if _, err := os.Lstat(filepath.Join(l, p)); err == nil {
				inImage = true
				break
			}
		}
		if !inImage {
			os.Remove(filepath.Join(upper, p)) // only if empty
		}
	}
}

var (
	selfOnce sync.Once
	selfFile *os.File
	selfErr  error
)

// selfCopy returns a sealed memfd holding this executable.
func selfCopy() (*os.File, error) {
	selfOnce.Do(func() {
		fd, err := unix.MemfdCreate("nsrunner", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
		if err != nil {
			selfErr = err
			return
		}
		f := os.NewFile(uintptr(fd), "nsrunner")
		src, err := os.Open("/proc/self/exe")
		if err != nil {
			f.Close()
			selfErr = err
			return
		}
		defer src.Close()
		if _, err := io.Copy(f, src); err != nil {
			f.Close()
			selfErr = err
			return
		}
		if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
			f.Close()
			selfErr = err
			return
		}
		selfFile = f
	})
	return selfFile, selfErr
}

const setupFailed = 125

// Main runs the namespace helper when the process is one; call it first
// in TestMain.
func Main() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	var cfg childConfig
	if err := json.Unmarshal([]byte(os.Getenv(configEnv)), &cfg); err != nil {
		fail("config: %v", err)
	}
	if err := child(&cfg); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "nsrunner: "+format+"\n", args...)
	os.Exit(setupFailed)
}

func child(cfg *childConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	var b [1]byte
	if n, err := os.NewFile(3, "go").Read(b[:]); n != 1 {
		return fmt.Errorf("parent went away: %v", err)
	}
	var lowers []string
	for i := 0; i < cfg.Lowers; i++ {
		lowers = append(lowers, filepath.Join(cfg.Dir, "l"+strconv.Itoa(i)))
	}
	merged := filepath.Join(cfg.Dir, "merged")
	opts := "lowerdir=" + strings.Join(lowers, ":") + ",upperdir=" + filepath.Join(cfg.Dir, "rw/upper") + ",workdir=" + filepath.Join(cfg.Dir, "rw/work") + ",userxattr"
	if err := unix.Mount("overlay", merged, "overlay", unix.MS_NOSUID, opts); err != nil {
		return fmt.Errorf("mount overlay: %w", err)
	}
	for _, d := range []string{"proc", "dev"} {
		if err := os.MkdirAll(filepath.Join(merged, d), 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", filepath.Join(merged, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	dev := filepath.Join(merged, "dev")
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom"} {
		p := filepath.Join(dev, d)
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+d, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", d, err)
		}
	}
	if err := unix.Sethostname([]byte("build")); err != nil {
		return err
	}
	if err := unix.Chdir(merged); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return fmt.Errorf("WORKDIR %s: %w", cfg.WorkDir, err)
	}
	if err := unix.Chdir(cfg.WorkDir); err != nil {
		return fmt.Errorf("WORKDIR %s: %w", cfg.WorkDir, err)
	}
	if err := unix.Setgroups(nil); err != nil {
		return err
	}
	if err := syscall.Setgid(cfg.GID); err != nil {
		return fmt.Errorf("setgid %d: %w", cfg.GID, err)
	}
	if err := syscall.Setuid(cfg.UID); err != nil {
		return fmt.Errorf("setuid %d: %w", cfg.UID, err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range cfg.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	bin := cfg.Cmd[0]
	if !strings.Contains(bin, "/") {
		os.Setenv("PATH", path)
		p, err := exec.LookPath(bin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: command not found\n", bin)
			os.Exit(127)
		}
		bin = p
	}
	err := unix.Exec(bin, cfg.Cmd, cfg.Env)
	fmt.Fprintf(os.Stderr, "%s: %v\n", cfg.Cmd[0], err)
	if errors.Is(err, unix.ENOENT) {
		os.Exit(127)
	}
	os.Exit(126)
	return nil
}
