//go:build linux

package process

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/openat2"
	"github.com/paddockhq/paddock/internal/guest/user"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Env is the environment of a process run as id in cwd: defaults, then
// the sandbox's, then extra (the request's). It returns the PATH too.
func (s *Service) Env(id user.ID, cwd string, extra map[string]string, tty bool) (env []string, pathVar string) {
	m := map[string]string{
		"PATH":     defaultPath,
		"HOME":     id.Home,
		"USER":     id.Name,
		"LOGNAME":  id.Name,
		"SHELL":    s.cfg.Shell,
		"LANG":     "C.UTF-8",
		"PWD":      cwd,
		"HOSTNAME": s.cfg.Hostname,
	}
	if tty {
		m["TERM"] = "xterm-256color"
	}
	for k, v := range s.sandboxEnv() {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	env = make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	return env, m["PATH"]
}

// defaultCwd is where commands start unless they say otherwise.
var defaultCwd = "/workspace"

// SetDefaultCwd sets the default working directory (an image template's
// WORKDIR); the agent calls it once at setup, before serving.
func SetDefaultCwd(dir string) {
	if path.IsAbs(dir) {
		defaultCwd = path.Clean(dir)
	}
}

// resolveCwd makes cwd absolute (relative to the default directory) and
// checks it is a directory.
func resolveCwd(cwd string) (string, error) {
	if cwd == "" {
		cwd = defaultCwd
	}
	if !path.IsAbs(cwd) {
		cwd = path.Join(defaultCwd, cwd)
	}
	cwd = path.Clean(cwd)
	fd, err := openWorkDir(cwd)
	if err != nil {
		return "", errs.Invalid("working directory %q does not exist in the sandbox", cwd)
	}
	unix.Close(fd)
	return cwd, nil
}

// openWorkDir opens directory p for use as a working directory, refusing
// magic links. /proc/self/fd/N names a descriptor of the agent, which may
// be a host directory (its delegated cgroups); a child that chdir'd there
// before execve — when the agent's close-on-exec descriptors are still
// open in it — would work outside its root: the runc escape
// CVE-2024-21626. spawn hands the child this verified descriptor rather
// than the path, so nothing can be swapped in between.
func openWorkDir(p string) (int, error) {
	return openat2.Open(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_MAGICLINKS,
	})
}

// lookPath finds name like execvp(3) would, with the command's own PATH.
func lookPath(name, pathVar, cwd string) (string, error) {
	if name == "" {
		return "", errs.Invalid("empty command")
	}
	check := func(p string) error {
		// No magic links here either (see openWorkDir): an executable is a
		// file of the sandbox, never one reached through the agent's
		// descriptors.
		fd, err := openat2.Open(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return err
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR || st.Mode&0o111 == 0 {
			return fs.ErrPermission
		}
		return nil
	}
	if strings.Contains(name, "/") {
		p := name
		if !path.IsAbs(p) {
			p = path.Join(cwd, p)
		}
		if err := check(p); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return "", errs.New(errs.CodeCommandNotFound, "%q is not an executable file", name)
			}
			return "", errs.New(errs.CodeCommandNotFound, "command %q not found", name)
		}
		return p, nil
	}
	for _, dir := range strings.Split(pathVar, ":") {
		if dir == "" {
			dir = "."
		}
		p := path.Join(dir, name)
		if !path.IsAbs(p) {
			p = path.Join(cwd, p)
		}
		if check(p) == nil {
			return p, nil
		}
	}
	return "", errs.New(errs.CodeCommandNotFound, "command %q not found in PATH", name)
}

// StartErr words a failed spawn of name for the caller.
func StartErr(name string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, syscall.ENOENT):
		return errs.Wrap(errs.CodeCommandNotFound, err, "cannot start %q: no such file or directory (or its interpreter is missing)", name)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return errs.Wrap(errs.CodeCommandNotFound, err, "cannot start %q: permission denied", name)
	case errors.Is(err, syscall.ENOEXEC):
		return errs.Wrap(errs.CodeCommandNotFound, err, "cannot start %q: not an executable format", name)
	case errors.Is(err, syscall.E2BIG):
		return errs.Wrap(errs.CodeInvalid, err, "cannot start %q: argument list too long", name)
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.ENOMEM):
		return errs.Wrap(errs.CodeLimit, err, "cannot start %q: the sandbox's process or memory limit is reached", name)
	}
	return errs.Wrap(errs.CodeInternal, err, "cannot start %q", name)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
