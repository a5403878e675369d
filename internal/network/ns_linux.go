//go:build linux

package network

import (
	"context"
	"fmt"
	"net"
	goruntime "runtime"

	"golang.org/x/sys/unix"
)

// hostNS is the network namespace that holds the host side (the sandbox
// interfaces' other ends, the nftables table, the proxy's sockets and its
// outbound connections). Production uses the server's own namespace; tests
// use one they create, so that nothing they do touches the machine's.
type hostNS struct {
	fd   int // -1: the current namespace
	orig int // the process's own namespace, to return to
}

func openHostNS(path string) (*hostNS, error) {
	if path == "" {
		return &hostNS{fd: -1, orig: -1}, nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("host network namespace %s: %w", path, err)
	}
	orig, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &hostNS{fd: fd, orig: orig}, nil
}

func (n *hostNS) close() {
	if n.fd >= 0 {
		unix.Close(n.fd)
		unix.Close(n.orig)
		n.fd, n.orig = -1, -1
	}
}

// do runs f with the calling thread in the host namespace: sockets f
// creates belong to it. setns taints the thread, so f runs on a locked
// thread that is handed back only once it is back home (or discarded).
func (n *hostNS) do(f func() error) error {
	if n.fd < 0 {
		return f()
	}
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			goruntime.UnlockOSThread()
			errc <- fmt.Errorf("enter host network namespace: %w", err)
			return
		}
		err := f()
		if unix.Setns(n.orig, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		} // else: the thread stays locked and dies with this goroutine
		errc <- err
	}()
	return <-errc
}

// dial opens an outbound connection from the host namespace.
func (n *hostNS) dial(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	if n.fd < 0 {
		return d.DialContext(ctx, network, address)
	}
	var c net.Conn
	err := n.do(func() (err error) {
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

func (n *hostNS) listen(network, address string) (net.Listener, error) {
	var ln net.Listener
	err := n.do(func() (err error) {
		ln, err = net.Listen(network, address)
		return err
	})
	return ln, err
}

func (n *hostNS) listenPacket(network, address string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := n.do(func() (err error) {
		pc, err = net.ListenPacket(network, address)
		return err
	})
	return pc, err
}
