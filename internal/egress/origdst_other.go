//go:build !linux

package egress

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/paddockhq/paddock/internal/errs"
)

func originalDst(*net.TCPConn) (netip.AddrPort, error) {
	return netip.AddrPort{}, fmt.Errorf("transparent proxying: %w", errs.ErrUnsupported)
}
