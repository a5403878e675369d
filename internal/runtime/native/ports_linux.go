//go:build linux

package native

import (
	"context"
	"errors"
	"fmt"
	"net"
	goruntime "runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/hostproc"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Exposed ports: the server reaches a port on the sandbox's own loopback
// from a host thread that joined the sandbox's network namespace. A
// socket belongs to the namespace it was created in, so once connected it
// works from any thread. This needs no interface in the sandbox (mode
// "none" has none) and reaches services bound to 127.0.0.1 only.

// DialPort connects to TCP port on the sandbox's loopback (127.0.0.1, then
// ::1 if nothing listens there).
func (i *instance) DialPort(ctx context.Context, port int) (net.Conn, error) {
	if err := runtime.CheckDial(port, i.done); err != nil {
		return nil, err
	}
	// A pidfd of our own (the instance's may be closed by a concurrent
	// teardown), checked against the recorded start time: a recycled pid
	// must never lead into another process's namespace (PID-reuse race).
	pidfd, err := unix.PidfdOpen(i.pid, 0)
	if err != nil {
		return nil, errs.New(errs.CodeSandboxNotActive, "the sandbox is not running")
	}
	defer unix.Close(pidfd)
	if st, err := hostproc.StartTime(i.pid); err != nil || st != i.startTime {
		return nil, errs.New(errs.CodeSandboxNotActive, "the sandbox is not running")
	}
	c, err := dialInNetNS(ctx, pidfd, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if errors.Is(err, syscall.ECONNREFUSED) {
		if c6, err6 := dialInNetNS(ctx, pidfd, "tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err6 == nil {
			return c6, nil
		}
	}
	return c, err
}

// dialInNetNS dials address from a locked thread that joined the network
// namespace of the process nsfd (a pidfd) refers to. setns taints the
// thread: it is handed back to the scheduler only once it is back in the
// host's namespace, and otherwise dies with its goroutine.
func dialInNetNS(ctx context.Context, nsfd int, network, address string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			goruntime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("open own network namespace: %w", err)}
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(nsfd, unix.CLONE_NEWNET); err != nil {
			goruntime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("enter the sandbox's network namespace: %w", err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, address)
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
