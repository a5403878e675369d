package sandbox

import (
	"context"
	"net"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// Exposed ports (docs/ports.md): a TCP port a sandbox listens on, reached
// through the server. The backend connects from the host side into the
// sandbox's own network namespace, so a port is reachable whatever the
// network mode (a sandbox in mode "none" has no interface at all).

// portDialer is what a backend's instance offers to reach its ports
// (the native backend: a thread that joined the sandbox's network
// namespace connects to its loopback).
type portDialer interface {
	DialPort(ctx context.Context, port int) (net.Conn, error)
}

// portAdmitter is the tenant policy's check (tenant.Admission has it).
type portAdmitter interface {
	AdmitExposedPorts(ctx context.Context, tenant string, ports []int) error
}

// PortTarget is a port of a running sandbox that a caller may reach.
type PortTarget struct {
	Sandbox string
	Port    int
	d       portDialer
}

// Dial connects to the port (on the sandbox's loopback).
func (t *PortTarget) Dial(ctx context.Context) (net.Conn, error) { return t.d.DialPort(ctx, t.Port) }

// ExposePort checks that scope may reach port of sandbox id — the sandbox
// is running and the tenant may expose ports — and returns how to connect
// to it. Each request through the port proxy asks again, so a quota
// change or a deleted sandbox takes effect at once.
func (m *Manager) ExposePort(ctx context.Context, sc Scope, id string, port int) (*PortTarget, error) {
	if err := sc.Need(rights.Exec); err != nil {
		return nil, err
	}
	if port < 1 || port > 65535 {
		return nil, errs.Invalid("port must be between 1 and 65535")
	}
	b, err := m.running(sc, id)
	if err != nil {
		return nil, err
	}
	if pa, ok := m.adm.(portAdmitter); ok {
		if err := pa.AdmitExposedPorts(ctx, sc.Tenant, []int{port}); err != nil {
			return nil, err
		}
	}
	d, ok := b.inst.(portDialer)
	if !ok {
		return nil, errs.New(errs.CodeUnsupported, "this server's runtime cannot reach sandbox ports")
	}
	return &PortTarget{Sandbox: id, Port: port, d: d}, nil
}
