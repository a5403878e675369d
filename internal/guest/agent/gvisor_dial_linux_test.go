//go:build linux

package agent

import (
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// spareFor wraps one end of a socketpair as the agent's connection to the
// host and returns it with the host's end.
func spareFor(t *testing.T) (*spareConn, net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "sock")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	l := &dialListener{need: make(chan struct{}, 4)}
	return &spareConn{UnixConn: conn(fds[0]).(*net.UnixConn), l: l}, conn(fds[1])
}

// A read that waits past the probe interval is still the host's request
// when it comes, not an end of stream: the probe that runs between waits
// must see the host's end open (a probe that failed after the deadline
// passed read as closed, and cancelled every exec running over 1 s).
func TestSpareConnWaitsPastProbes(t *testing.T) {
	c, host := spareFor(t)
	go func() {
		time.Sleep(probeEvery*2 + probeEvery/2)
		_, _ = host.Write([]byte("x"))
	}()
	var b [1]byte
	n, err := c.Read(b[:])
	if err != nil || n != 1 || b[0] != 'x' {
		t.Fatalf("read after %v of waiting: %d %v, want the host's byte", 2*probeEvery, n, err)
	}
	if len(c.l.need) != 1 {
		t.Errorf("first use asked for %d replacements, want 1", len(c.l.need))
	}
}

// The host's end closed while a read waits (gVisor closes host connections
// when it saves a checkpoint without waking readers): the probe ends the
// read with EOF.
func TestSpareConnProbeSeesClose(t *testing.T) {
	c, host := spareFor(t)
	go func() {
		time.Sleep(probeEvery / 2)
		host.Close()
	}()
	start := time.Now()
	var b [1]byte
	if _, err := c.Read(b[:]); err != io.EOF {
		t.Fatalf("read on a closed connection: %v, want EOF", err)
	}
	if d := time.Since(start); d > 10*probeEvery {
		t.Errorf("close noticed after %v", d)
	}
}

// A deadline the server set still ends the read with a timeout.
func TestSpareConnKeepsServerDeadline(t *testing.T) {
	c, _ := spareFor(t)
	_ = c.SetReadDeadline(time.Now().Add(probeEvery + probeEvery/2))
	var b [1]byte
	_, err := c.Read(b[:])
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("read past the server's deadline: %v, want a timeout", err)
	}
}
