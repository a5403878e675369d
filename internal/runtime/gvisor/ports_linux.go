//go:build linux

package gvisor

import (
	"context"
	"fmt"
	"net"
	"syscall"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// DialPort connects to TCP port on the sandbox's loopback, through the
// agent (gVisor's netstack cannot be joined from the host; docs/ports.md).
// Nothing listening is ECONNREFUSED, as natively.
func (i *instance) DialPort(ctx context.Context, port int) (net.Conn, error) {
	if err := runtime.CheckDial(port, i.done); err != nil {
		return nil, err
	}
	if i.guest == nil {
		return nil, errNotStarted
	}
	c, err := i.guest.DialPort(ctx, port)
	if errs.CodeOf(err) == errs.CodeNotFound {
		return nil, fmt.Errorf("%w: %w", syscall.ECONNREFUSED, err)
	}
	return c, err
}
