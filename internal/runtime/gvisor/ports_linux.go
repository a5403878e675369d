//go:build linux

package gvisor

import (
	"context"
	"fmt"
	"net"
	"syscall"

	"github.com/paddockhq/paddock/internal/errs"
)

// DialPort connects to TCP port on the sandbox's loopback, through the
// agent (gVisor's netstack cannot be joined from the host; docs/ports.md).
// Nothing listening is ECONNREFUSED, as natively.
func (i *instance) DialPort(ctx context.Context, port int) (net.Conn, error) {
	if port < 1 || port > 65535 {
		return nil, errs.Invalid("port must be between 1 and 65535")
	}
	select {
	case <-i.done:
		return nil, errs.New(errs.CodeSandboxNotActive, "the sandbox is not running")
	default:
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
