package netlab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NS is a network namespace a test made. It lives until the test ends.
type NS struct {
	t  testing.TB
	FD int
}

// New makes a namespace with its loopback up.
func New(t testing.TB) *NS {
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
	var n *NS
	select {
	case err := <-errc:
		t.Fatalf("new network namespace: %v", err)
	case fd := <-fdc:
		n = &NS{t: t, FD: fd}
	}
	t.Cleanup(func() { unix.Close(n.FD) })
	h := n.Handle()
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		t.Fatalf("loopback up: %v", err)
	}
	return n
}

// Path names the namespace for other processes and for setns.
func (n *NS) Path() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.FD) }

// Handle is a netlink handle inside the namespace.
func (n *NS) Handle() *netlink.Handle {
	n.t.Helper()
	h, err := netlink.NewHandleAt(netns.NsHandle(n.FD), unix.NETLINK_ROUTE)
	if err != nil {
		n.t.Fatalf("netlink: %v", err)
	}
	n.t.Cleanup(h.Close)
	return h
}

// Do runs f on a thread inside the namespace (sockets made there, and
// processes started there, belong to it).
func (n *NS) Do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(self)
		if err := unix.Setns(n.FD, unix.CLONE_NEWNET); err != nil {
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

// Dial dials from inside the namespace (5 s at most to connect).
func (n *NS) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen listens inside the namespace until the test ends.
func (n *NS) Listen(network, addr string) net.Listener {
	n.t.Helper()
	var ln net.Listener
	if err := n.Do(func() (err error) { ln, err = net.Listen(network, addr); return err }); err != nil {
		n.t.Fatalf("listen %s in the test namespace: %v", addr, err)
	}
	n.t.Cleanup(func() { ln.Close() })
	return ln
}

// ListenPacket opens a packet socket inside the namespace until the test
// ends.
func (n *NS) ListenPacket(network, addr string) net.PacketConn {
	n.t.Helper()
	var pc net.PacketConn
	if err := n.Do(func() (err error) { pc, err = net.ListenPacket(network, addr); return err }); err != nil {
		n.t.Fatalf("listen %s in the test namespace: %v", addr, err)
	}
	n.t.Cleanup(func() { pc.Close() })
	return pc
}

// AddAddr puts the CIDR addresses on link.
func AddAddr(t testing.TB, h *netlink.Handle, l netlink.Link, cidrs ...string) {
	t.Helper()
	for _, c := range cidrs {
		p := netip.MustParsePrefix(c)
		a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
		if p.Addr().Is6() {
			a.Flags = unix.IFA_F_NODAD // usable at once
		}
		if err := h.AddrAdd(l, a); err != nil {
			t.Fatalf("add %s: %v", c, err)
		}
	}
}
