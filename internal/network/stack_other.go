//go:build !linux

package network

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Options configure a Stack.
type Options struct {
	DB                       *sql.DB
	Log                      *slog.Logger
	HostNS                   string
	Instance                 string
	PoolV4, PoolV6, IfPrefix string
	Table                    string
	ProxyPort, DNSPort       uint16
	Upstreams                []netip.AddrPort
	Static                   map[string][]netip.Addr
	AllowCIDR                []netip.Prefix
	Egress                   egress.Options
}

// SetupHook may add files and variables to a sandbox's network setup.
type SetupHook func(ctx context.Context, id string, p runtime.NetPolicy, s *runtime.NetSetup) error

// Stack is unavailable off Linux.
type Stack struct{}

// New reports that sandbox networking needs Linux.
func New(context.Context, Options) (*Stack, error) {
	return nil, fmt.Errorf("sandbox networking: %w", errs.ErrUnsupported)
}

// Egress is nil off Linux.
func (s *Stack) Egress() *egress.Server { return nil }

// Guard is nil off Linux.
func (s *Stack) Guard() *policy.Guard { return nil }

// SetSetupHook does nothing off Linux.
func (s *Stack) SetSetupHook(SetupHook) {}

// Close does nothing off Linux.
func (s *Stack) Close() error { return nil }

// Attach implements runtime.Network.
func (s *Stack) Attach(context.Context, string, int, runtime.NetPolicy) (runtime.NetSetup, error) {
	return runtime.NetSetup{}, errs.ErrUnsupported
}

// Detach implements runtime.Network.
func (s *Stack) Detach(context.Context, string) error { return nil }

// Sweep implements runtime.Network.
func (s *Stack) Sweep(context.Context, map[string]bool) (int, error) { return 0, nil }

// Plan is empty off Linux.
func (s *Stack) Plan() Plan { return Plan{} }

// Attachment reports no attachment off Linux.
func (s *Stack) Attachment(string) (Slot, bool) { return Slot{}, false }

// Ports are zero off Linux.
func (s *Stack) Ports() (proxy, dns uint16) { return 0, 0 }

// Table is empty off Linux.
func (s *Stack) Table() string { return "" }
