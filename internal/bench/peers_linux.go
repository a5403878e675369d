package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/runtime/gvisor"
)

// floorShot is a plain fork/exec of /bin/true, its output to /dev/null:
// the least any sandbox can cost.
func floorShot() *shot {
	s := &shot{res: Result{Name: sFloor, Description: describe(sFloor)}, ready: true}
	s.run = func(ctx context.Context) error { return exec.CommandContext(ctx, trueCmd[0]).Run() }
	return s
}

// runQuiet runs argv, returning its stderr in the error if it fails.
func runQuiet(ctx context.Context, argv ...string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if msg := bytes.TrimSpace(stderr.Bytes()); len(msg) > 0 {
			return fmt.Errorf("%s: %w: %s", filepath.Base(argv[0]), err, clip(string(msg), 300))
		}
		return fmt.Errorf("%s: %w", filepath.Base(argv[0]), err)
	}
	return nil
}

// peerShot prepares one peer; a peer that is not installed is reported
// as missing, one whose preparation fails as failed.
func (r *runner) peerShot(ctx context.Context, name string) *shot {
	s := &shot{res: r.result(name)}
	var err error
	switch name {
	case sBwrap, sBwrapDev:
		err = s.bwrap(name == sBwrapDev)
	case sRunc:
		err = s.runc(ctx, r.runID)
	case sRunsc:
		err = s.runsc(ctx, r.runID, r.o.Runsc)
	}
	var miss missingError
	switch {
	case errors.As(err, &miss):
		s.res = s.res.without(StatusMissing, miss.Error())
	case err != nil:
		s.res = s.res.without(StatusFailed, err.Error())
	default:
		s.ready = true
	}
	return s
}

type missingError string

func (e missingError) Error() string { return string(e) }

func (s *shot) bwrap(devProc bool) error {
	bin, err := exec.LookPath("bwrap")
	if err != nil {
		return missingError("not installed (bwrap not in PATH; Debian: apt-get install bubblewrap)")
	}
	argv := []string{bin, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"}
	if devProc {
		argv = append(argv, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	}
	argv = append(argv, trueCmd...)
	s.run = func(ctx context.Context) error { return runQuiet(ctx, argv...) }
	s.res.note("%s", shellLine(argv))
	return nil
}

// runcUIDBase is the host uid range the runc bundle maps its root to:
// above the ranges Paddock's servers and tests use.
const runcUIDBase = 4_200_000_000

func (s *shot) runc(ctx context.Context, runID string) error {
	bin, err := exec.LookPath("runc")
	if err != nil {
		return missingError("not installed (runc not in PATH; Debian: apt-get install runc)")
	}
	dir, err := makeBundle("runc", true)
	if err != nil {
		return err
	}
	state := filepath.Join(dir, "state")
	var n atomic.Int64
	s.run = func(ctx context.Context) error {
		id := fmt.Sprintf("pb-%s-%d", runID, n.Add(1))
		err := runQuiet(ctx, bin, "--root", state, "run", "--bundle", dir, id)
		if err != nil {
			forceDelete(bin, state, id)
		}
		return err
	}
	s.close = func() { _ = os.RemoveAll(dir) }
	s.res.note("runc run --bundle B ID: B's config.json runs /bin/true with pid, net, ipc, uts, mount, user and cgroup namespaces, root mapped to host uid %d+, host /usr bind-mounted read-only, no capabilities, 1 cpu / 512 MiB / 512 pids", runcUIDBase)
	return nil
}

func (s *shot) runsc(ctx context.Context, runID, bin string) error {
	bin, err := findRunsc(bin)
	if err != nil {
		return err
	}
	dir, err := makeBundle("runsc", false)
	if err != nil {
		return err
	}
	state := filepath.Join(dir, "state")
	base := []string{bin, "--root", state, "--network=none", "--ignore-cgroups"}
	var n atomic.Int64
	s.run = func(ctx context.Context) error {
		id := fmt.Sprintf("pb-%s-%d", runID, n.Add(1))
		err := runQuiet(ctx, append(base, "run", "--bundle", dir, id)...)
		if err != nil {
			forceDelete(bin, state, id)
		}
		return err
	}
	s.close = func() { _ = os.RemoveAll(dir) }
	s.res.note("%s run --bundle B ID (systrap platform; the same bundle without a user namespace: gVisor's own kernel is the isolation; --ignore-cgroups: runsc leaves cgroups behind on a hybrid host)", bin)
	return nil
}

// findRunsc resolves the runsc binary: the flag, PATH, then the cache
// where make deps or docs/benchmarks.md builds it.
func findRunsc(flag string) (string, error) {
	if flag != "" {
		if st, err := os.Stat(flag); err != nil || st.Mode()&0o111 == 0 {
			return "", missingError(fmt.Sprintf("--runsc %s is not an executable file", flag))
		}
		return flag, nil
	}
	if p, err := exec.LookPath("runsc"); err == nil {
		return p, nil
	}
	// Where make deps builds it (docs/gvisor.md).
	if p := gvisor.DefaultRunscPath(); isExec(p) {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "paddock", "runsc", "runsc")
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", missingError("not installed (no runsc in PATH, where make deps builds it, or ~/.cache/paddock/runsc; run make deps or pass --runsc PATH)")
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func forceDelete(bin, state, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = exec.CommandContext(ctx, bin, "--root", state, "delete", "--force", id).Run()
}

// makeBundle writes an OCI bundle running /bin/true: a rootfs of empty
// mount points and the host's merged-/usr symlinks, with /usr (and any
// top-level system directory that is not a symlink into it) bind-mounted
// read-only from the host, like Paddock's host template.
func makeBundle(kind string, userns bool) (string, error) {
	dir, err := os.MkdirTemp("", "paddock-bench-"+kind+"-")
	if err != nil {
		return "", fmt.Errorf("%s bundle: %w", kind, err)
	}
	fail := func(err error) (string, error) {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("%s bundle: %w", kind, err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
	rootfs := filepath.Join(dir, "rootfs")
	for _, d := range []string{"usr", "proc", "dev", "sys", "tmp", "etc", "workspace"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return fail(err)
		}
	}
	mounts := []map[string]any{
		{"destination": "/proc", "type": "proc", "source": "proc"},
		{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		{"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "nodev", "mode=1777"}},
		{"destination": "/usr", "type": "bind", "source": "/usr", "options": []string{"rbind", "ro", "nosuid", "nodev"}},
	}
	for _, top := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		host := "/" + top
		fi, err := os.Lstat(host)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(host)
			if err != nil {
				return fail(err)
			}
			if err := os.Symlink(target, filepath.Join(rootfs, top)); err != nil {
				return fail(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Join(rootfs, top), 0o755); err != nil {
			return fail(err)
		}
		mounts = append(mounts, map[string]any{"destination": host, "type": "bind", "source": host,
			"options": []string{"rbind", "ro", "nosuid", "nodev"}})
	}
	namespaces := []map[string]string{{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}}
	linux := map[string]any{
		"namespaces": namespaces,
		"resources": map[string]any{
			"memory": map[string]any{"limit": 512 << 20},
			"pids":   map[string]any{"limit": 512},
			"cpu":    map[string]any{"quota": 100000, "period": 100000},
		},
		"maskedPaths":   []string{"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"},
		"readonlyPaths": []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
	}
	if userns {
		linux["namespaces"] = append(namespaces, map[string]string{"type": "user"}, map[string]string{"type": "cgroup"})
		m := []map[string]int64{{"containerID": 0, "hostID": runcUIDBase, "size": 65536}}
		linux["uidMappings"], linux["gidMappings"] = m, m
	}
	none := []string{}
	cfg := map[string]any{
		"ociVersion": "1.0.2",
		"process": map[string]any{
			"terminal": false, "user": map[string]int{"uid": 0, "gid": 0}, "args": trueCmd,
			"env": []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/"}, "cwd": "/workspace",
			"capabilities":    map[string][]string{"bounding": none, "effective": none, "permitted": none, "inheritable": none, "ambient": none},
			"rlimits":         []map[string]any{{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}},
			"noNewPrivileges": true,
		},
		"root":     map[string]any{"path": "rootfs", "readonly": true},
		"hostname": "bench",
		"mounts":   mounts,
		"linux":    linux,
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		return fail(err)
	}
	return dir, nil
}

func shellLine(argv []string) string {
	out := filepath.Base(argv[0])
	for _, a := range argv[1:] {
		out += " " + a
	}
	return out
}
