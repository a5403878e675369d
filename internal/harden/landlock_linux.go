//go:build linux

package harden

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// maxRulePaths bounds FSRules: each path costs an open and a landlock_add_rule.
const maxRulePaths = 4096

// Access rights granted beneath writable paths only. Everything else that
// Landlock can restrict is granted on "/".
const writeRights = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSTruncate)

// RestrictFS applies r with Landlock (best available ABI, at least 1) to every
// thread. It also scopes abstract unix sockets where the ABI allows it (see
// scopeAbstractUnix).
//
// go-landlock enforces on every thread: with ABI 8+ through
// LANDLOCK_RESTRICT_SELF_TSYNC, below that through psx, which in a
// CGO_ENABLED=0 binary is syscall.AllThreadsSyscall.
func RestrictFS(r FSRules) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return fmt.Errorf("landlock not available (%v): %w", err, errs.ErrUnsupported)
	}
	if abi < 1 {
		return fmt.Errorf("landlock not available (abi %d): %w", abi, errs.ErrUnsupported)
	}
	trees, files, full, err := r.existing()
	if err != nil {
		return err
	}

	// Handle every filesystem right go-landlock knows; BestEffort narrows
	// the set to what the running kernel supports. Rights granted on "/"
	// (resolve_unix from ABI 9, for one) restrict nothing.
	handled := landlock.V11.HandledAccessFS
	everywhere := handled &^ writeRights
	if abi < 2 {
		// ABI 1 cannot grant "refer" (go-landlock would then silently
		// enforce nothing); without it cross-directory renames fail with
		// EXDEV, which is acceptable.
		everywhere &^= ll.AccessFSRefer
	}
	cfg := landlock.Config{HandledAccessFS: handled}
	if scopeAbstractUnix(abi) {
		cfg.Scoped = ll.ScopeAbstractUnixSocket
	}

	// Read, execute, create and remove anywhere; write and truncate only
	// beneath the writable paths. Trees that leave /proc and /sys out (a
	// Pod's) keep them closed for writing even to the sandbox's root; a
	// native sandbox grants "/" and closes them with read-only mounts: /proc/sys/kernel/core_pattern (a
	// "|program" there runs as host root — the privileged-container
	// escape), /proc/sysrq-trigger (crash or reboot the host),
	// /proc/PID/mem (CVE-2012-0056, Mempodipper). IOCTL_DEV stays granted:
	// terminals need it, and seccomp filters the dangerous tty ioctls.
	rules := []landlock.Rule{landlock.PathAccess(everywhere, "/")}
	if len(trees) > 0 {
		rules = append(rules, landlock.PathAccess(writeRights, trees...).IgnoreIfMissing())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.PathAccess(writeRights, files...).IgnoreIfMissing())
	}
	if len(full) > 0 {
		rules = append(rules, landlock.PathAccess(handled, full...))
	}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock restrict (abi %d): %w", abi, err)
	}
	return nil
}

// scopeAbstractUnix reports whether abstract unix sockets are scoped to the
// sandbox's Landlock domain, so that a workload cannot connect to an
// abstract socket bound outside it (the containerd-shim escape,
// CVE-2020-15257, went through such a socket).
//
// Scoping needs ABI 6, but is only used from ABI 8: below that go-landlock
// enforces thread by thread, and every thread gets its own domain. Two
// workloads forked from different threads of the guest would then sit in
// sibling domains and could not reach each other's abstract sockets (an X
// server and its clients, for one). The network namespace already hides
// every abstract socket outside the sandbox, so on older kernels only this
// second layer is missing.
func scopeAbstractUnix(abi int) bool { return abi >= 8 }

// existing validates r and returns its paths that exist. A WritableFiles
// entry must not be a directory: that would silently open a whole tree.
func (r FSRules) existing() (trees, files, full []string, err error) {
	if n := len(r.WritableTrees) + len(r.WritableFiles) + len(r.FullTrees); n > maxRulePaths {
		return nil, nil, nil, errs.Invalid("%d writable paths exceed the limit of %d", n, maxRulePaths)
	}
	for _, p := range r.WritableTrees {
		ok, _, err := statRulePath(p)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok {
			trees = append(trees, p)
		}
	}
	for _, p := range r.WritableFiles {
		ok, dir, err := statRulePath(p)
		if err != nil {
			return nil, nil, nil, err
		}
		if dir {
			return nil, nil, nil, errs.Invalid("writable file %q is a directory", p)
		}
		if ok {
			files = append(files, p)
		}
	}
	for _, p := range r.FullTrees {
		ok, dir, err := statRulePath(p)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok || !dir {
			// Unlike the others these are never optional: the caller opened them.
			return nil, nil, nil, errs.Invalid("full-access tree %q is not a directory", p)
		}
		full = append(full, p)
	}
	return trees, files, full, nil
}

// statRulePath reports whether p exists (following symlinks, as Landlock
// does) and whether it is a directory. Relative paths are refused: they
// would depend on the working directory at the time of the call.
func statRulePath(p string) (exists, dir bool, err error) {
	if !filepath.IsAbs(p) {
		return false, false, errs.Invalid("landlock path %q is not absolute", p)
	}
	var st unix.Stat_t
	switch err := unix.Stat(p, &st); {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("stat landlock path %q: %w", p, err)
	}
	return true, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}
