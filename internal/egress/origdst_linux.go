//go:build linux

package egress

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// soOriginalDst is SO_ORIGINAL_DST (IPv4) and IP6T_SO_ORIGINAL_DST (IPv6).
const soOriginalDst = 80

// originalDst returns where a connection redirected to the proxy was
// going. It reads the conntrack entry of the proxy's own namespace — the
// host's, where the sandbox's traffic was redirected.
func originalDst(c *net.TCPConn) (netip.AddrPort, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var out netip.AddrPort
	var serr error
	v6 := false
	if la, ok := c.LocalAddr().(*net.TCPAddr); ok && la.IP.To4() == nil {
		v6 = true
	}
	err = rc.Control(func(fd uintptr) {
		if v6 {
			var sa unix.RawSockaddrInet6
			l := uint32(unsafe.Sizeof(sa))
			_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_IPV6, soOriginalDst,
				uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&l)), 0)
			if e != 0 {
				serr = e
				return
			}
			port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
			out = netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), port)
			return
		}
		var sa unix.RawSockaddrInet4
		l := uint32(unsafe.Sizeof(sa))
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_IP, soOriginalDst,
			uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&l)), 0)
		if e != 0 {
			serr = e
			return
		}
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
		out = netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), port)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", err)
	}
	return out, nil
}
