package kernel

import (
	"os"
	"syscall"
)

// ProcSpec is a process for a Starter to start.
type ProcSpec struct {
	Path string   // absolute path of the executable
	Args []string // argv, Args[0] included
	Env  []string // the whole environment
	Dir  string   // working directory
	// Stdin, Stdout and Stderr are the child's descriptors 0-2; nil means
	// /dev/null.
	Stdin, Stdout, Stderr *os.File
	// ExtraFiles become descriptors 3, 4, ... in the child.
	ExtraFiles []*os.File
}

// Process is a started process. It must run in its own process group (or
// session), so that Signal reaches the children it starts too.
type Process interface {
	Pid() int
	// Signal sends sig to the process's whole group.
	Signal(sig syscall.Signal) error
	// Kill ends the process and every process it started.
	Kill() error
	// Done is closed once the process has exited and been reaped.
	Done() <-chan struct{}
	// Exit reports how it ended; valid after Done.
	Exit() ExitStatus
}

// ExitStatus is how a process ended.
type ExitStatus struct {
	Code   int    // exit code; -1 when killed by a signal
	Signal string // "SIGKILL", ... when killed by a signal
	// OOM is true when the starter knows the process was killed for
	// exceeding its memory limit (a cgroup OOM kill).
	OOM bool
}

// Starter starts processes. The guest agent supplies one that spawns
// sandbox workloads (see the package doc); ExecStarter is the default.
type Starter interface {
	Start(ProcSpec) (Process, error)
}
