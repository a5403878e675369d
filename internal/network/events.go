package network

import (
	"context"

	"github.com/paddockhq/paddock/internal/egress"
)

// EventRecorder is where connection decisions go as events: the sandbox
// manager (sandbox.Manager.NetEvent), which attributes them to the
// sandbox's tenant and passes them to its Observer (the audit log).
type EventRecorder interface {
	NetEvent(ctx context.Context, sandbox, kind string, data map[string]any)
}

// Events adapts an EventRecorder to the egress proxy's Sink: each
// decision becomes an event of kind "net.connect" (or "net.dns").
func Events(r EventRecorder) egress.Sink {
	return egress.SinkFunc(func(ctx context.Context, d egress.Decision) {
		kind := "net.connect"
		if d.Kind == "dns" {
			kind = "net.dns"
		}
		data := map[string]any{
			"via": d.Via, "mode": d.Mode, "allowed": d.Allowed, "reason": d.Reason,
		}
		if d.Name != "" {
			data["name"] = d.Name
		}
		if d.Addr != "" {
			data["addr"] = d.Addr
		}
		if d.Port != 0 {
			data["port"] = d.Port
		}
		if d.Kind != "dns" && d.Allowed {
			data["bytes_up"], data["bytes_down"] = d.BytesUp, d.BytesDown
			data["duration_ms"] = float64(d.Duration.Microseconds()) / 1000
		}
		if d.Suppressed > 0 {
			data["suppressed"] = d.Suppressed
		}
		r.NetEvent(ctx, d.Sandbox, kind, data)
	})
}
