//go:build linux

package hostile

import (
	"context"
	"fmt"
	"net"
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netNS is a network namespace this test made, held by a descriptor: the
// only places (with loopback) the suite ever sends packets to.
type netNS struct {
	t  testing.TB
	fd int
}

// newNetNS makes a namespace with its loopback up.
func newNetNS(t testing.TB) *netNS {
	t.Helper()
	fdc := make(chan int, 1)
	errc := make(chan error, 1)
	go func() {
		// This thread enters the new namespace; it goes back where it was,
		// or, if it cannot, it is never reused (the goroutine exits locked).
		goruntime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(self)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if unix.Setns(self, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		}
		if err != nil {
			errc <- err
			return
		}
		fdc <- fd
	}()
	var n *netNS
	select {
	case err := <-errc:
		t.Fatalf("new network namespace: %v", err)
	case fd := <-fdc:
		n = &netNS{t: t, fd: fd}
	}
	t.Cleanup(func() { unix.Close(n.fd) })
	h := n.handle()
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		t.Fatalf("loopback up: %v", err)
	}
	return n
}

// path names the namespace for other processes.
func (n *netNS) path() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.fd) }

// handle is a netlink handle inside the namespace.
func (n *netNS) handle() *netlink.Handle {
	n.t.Helper()
	h, err := netlink.NewHandleAt(netns.NsHandle(n.fd), unix.NETLINK_ROUTE)
	if err != nil {
		n.t.Fatalf("netlink: %v", err)
	}
	n.t.Cleanup(h.Close)
	return h
}

// do runs f on a thread inside the namespace (sockets made there, and
// processes started there, belong to it).
func (n *netNS) do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(self)
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		err = f()
		if unix.Setns(self, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// dialContext dials from inside the namespace.
func (n *netNS) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.do(func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// listen listens inside the namespace.
func (n *netNS) listen(network, addr string) net.Listener {
	n.t.Helper()
	var ln net.Listener
	if err := n.do(func() (err error) { ln, err = net.Listen(network, addr); return err }); err != nil {
		n.t.Fatalf("listen %s in the test namespace: %v", addr, err)
	}
	n.t.Cleanup(func() { ln.Close() })
	return ln
}
