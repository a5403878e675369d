//go:build linux

package process

import (
	"fmt"
	"io"
	"os"
	"path"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// openPTY opens a terminal pair for a session running as uid/gid. Only the
// pair is opened here: the session is spawned by the hardened spawner, never
// by pty.Start (which forks on whatever thread it runs on, one that still
// has a full capability bounding set).
func openPTY(uid, gid uint32, sz guestapi.PTYSize) (master, slave *os.File, err error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	// pty.Open leaves the master in blocking mode (it calls Fd), and a
	// blocking read cannot be interrupted: re-wrap a non-blocking duplicate
	// that the runtime's poller manages, so Close and deadlines work.
	// Close-on-exec like every agent fd: a master inherited by another
	// workload would let it read and type into this session.
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	m.Close()
	if err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("dup pty master: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		s.Close()
		return nil, nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	// The terminal belongs to its user, as login(1) arranges: otherwise a
	// session as "user" could not reopen its own tty (tty(1), ssh-agent).
	if err := s.Chown(int(uid), int(gid)); err != nil {
		master.Close()
		s.Close()
		return nil, nil, fmt.Errorf("chown pty: %w", err)
	}
	if err := setWinsize(master, sz); err != nil {
		master.Close()
		s.Close()
		return nil, nil, err
	}
	return master, s, nil
}

// setWinsize sets the terminal size (TIOCSWINSZ); the kernel sends SIGWINCH
// to the terminal's foreground process group.
func setWinsize(f *os.File, sz guestapi.PTYSize) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	err = rc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(sz.Rows), Col: uint16(sz.Cols)})
	})
	if err != nil {
		return err
	}
	if ierr != nil {
		return fmt.Errorf("TIOCSWINSZ: %w", ierr)
	}
	return nil
}

// loginShell is the shell /etc/passwd gives user, if it is an executable
// file and not a refusal (nologin, false); fallback otherwise.
func loginShell(user, fallback string) string {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return fallback
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return fallback
	}
	sh := passwdShell(b, user)
	switch path.Base(sh) {
	case "", "nologin", "false", "true":
		return fallback
	}
	if !path.IsAbs(sh) {
		return fallback
	}
	if st, err := os.Stat(sh); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return fallback
	}
	return sh
}
