package harden

// Cap is a Linux capability number (see capabilities(7)).
type Cap uint

// Capabilities the guest agent keeps for itself after setup. Workloads get
// none of them: the bounding set is emptied, so execve grants nothing.
const (
	CapChown          Cap = 0
	CapDacOverride    Cap = 1
	CapDacReadSearch  Cap = 2
	CapFowner         Cap = 3
	CapFsetid         Cap = 4
	CapKill           Cap = 5
	CapSetgid         Cap = 6
	CapSetuid         Cap = 7
	CapSetpcap        Cap = 8
	CapNetBindService Cap = 10
	CapSysAdmin       Cap = 21
	CapSysResource    Cap = 24
	CapLast           Cap = 40 // CAP_CHECKPOINT_RESTORE, the last one on 6.x kernels
)

// FSRules describes the Landlock ruleset applied to a sandbox.
//
// Everything is readable and executable. Directories may be created and
// entries removed anywhere (the sandbox owns its whole root), but writing or
// truncating an existing file is granted only beneath WritableTrees and on
// the exact WritableFiles (device nodes such as /dev/null). Paths that do not
// exist are skipped. With trees that leave out /proc and /sys, those —
// sysrq-trigger, core_pattern, /proc/self/mem and friends — cannot be opened
// for writing even by the sandbox's root (a Pod's rules). A tree of "/"
// covers them too: a native sandbox grants it and closes /proc, /sys and
// /dev by read-only mounts instead (internal/guest/agent, fsRules).
//
// Paths must be absolute; a WritableFiles entry must not be a directory.
// Anything opened for writing after RestrictFS needs a rule, including
// /dev/null, which os/exec opens read-write for every unset stdio stream.
//
// FullTrees get every right beneath them. They exist for directories that
// lie outside the sandbox's root and that only the guest agent can name, by
// a descriptor it opened before pivot_root (its delegated cgroups, as
// "/proc/self/fd/N"): Landlock checks operations relative to such a
// descriptor too.
type FSRules struct {
	WritableTrees []string
	WritableFiles []string
	FullTrees     []string
}
