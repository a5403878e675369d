package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// obs is the audit log and the metrics, and the hooks they give the
// manager and the surfaces.
type obs struct {
	log     *slog.Logger
	audit   *audit.Log
	rec     *audit.Recorder
	webhook *audit.Webhook
	metrics *metrics.Metrics
	tracer  metrics.Tracer
	msrv    *http.Server
	drain   time.Duration
}

// openObs opens DATA/audit and builds the metrics; nil with
// Audit.Disable. Close it after the manager, so that the manager's last
// events are recorded.
func openObs(c *Config) (*obs, error) {
	o := &c.Audit
	if o.Disable {
		return nil, nil
	}
	var tracer metrics.Tracer = metrics.NopTracer{}
	if o.OTLPEndpoint != "" {
		var err error
		if tracer, err = metrics.NewOTLPTracer(context.Background(), o.OTLPEndpoint, c.Version); err != nil {
			return nil, fmt.Errorf("--otlp-endpoint: %w", err)
		}
	}
	m := metrics.New(metrics.Options{Tracer: tracer})
	l, err := audit.Open(audit.Options{Dir: filepath.Join(c.DataDir, "audit"), Sync: o.Sync, SyncInterval: o.SyncInterval,
		SegmentBytes: o.SegmentBytes, MaxSegments: o.MaxSegments, MaxBytes: o.MaxBytes, MaxAge: o.MaxAge,
		ArchiveDir: o.ArchiveDir, MinFreeBytes: o.MinFreeBytes, CheckpointEvery: o.CheckpointEvery,
		CheckpointInterval: o.CheckpointInterval, Version: c.Version, Log: c.Log, Stats: m})
	if err != nil {
		_ = tracer.Shutdown(context.Background())
		return nil, fmt.Errorf("audit log: %w", err)
	}
	b := &obs{log: c.Log, audit: l, metrics: m, tracer: tracer, drain: o.WebhookDrain}
	if b.drain == 0 {
		b.drain = 10 * time.Second
	}
	if o.Webhook != "" {
		if b.webhook, err = audit.NewWebhook(audit.WebhookOptions{URL: o.Webhook, Signer: l.SigningKey(), Log: c.Log}); err != nil {
			l.Close()
			_ = tracer.Shutdown(context.Background())
			return nil, fmt.Errorf("--audit-webhook: %w", err)
		}
	}
	b.rec = audit.NewRecorder(l, audit.RecorderOptions{FailOpen: o.FailOpen, RequestID: api.RequestID, Webhook: b.webhook,
		OnRoute: metrics.NoteRoute, Metrics: m.Handler(), Log: c.Log})
	if o.FailOpen {
		c.Log.Warn("audit log is fail-open: actions proceed when their records cannot be written")
	}
	if o.MetricsListen != "" {
		if err := b.serveMetrics(o.MetricsListen); err != nil {
			_ = b.Close()
			return nil, err
		}
	}
	c.Log.Info("audit log open", "dir", l.Dir(), "sync", string(l.Mode()), "signer", audit.Fingerprint(l.PublicKey()))
	return b, nil
}

// observer is the manager's Observer: the audit log first, then the
// metrics (nil without an audit log).
func (b *obs) observer() sandbox.Observer {
	if b == nil {
		return nil
	}
	return fanout{b.rec, b.metrics}
}

// auditor is the surfaces' Auditor, also the source of GET /v1/audit and
// GET /metrics (nil without an audit log).
func (b *obs) auditor() *audit.Recorder {
	if b == nil {
		return nil
	}
	return b.rec
}

// middleware is the API's middleware list around the hardening one:
// metrics outermost (they count what hardening refuses too), the audit's
// error-code capture innermost.
func (b *obs) middleware(harden ...func(http.Handler) http.Handler) []func(http.Handler) http.Handler {
	if b == nil {
		return harden
	}
	out := []func(http.Handler) http.Handler{b.metrics.Middleware}
	out = append(out, harden...)
	return append(out, b.rec.Middleware)
}

func (b *obs) serveMetrics(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", b.metrics.Handler())
	b.msrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute,
		MaxHeaderBytes: 16 << 10, ErrorLog: slog.NewLogLogger(b.log.Handler(), slog.LevelWarn)}
	go func() {
		if err := b.msrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.log.Error("metrics listener stopped", "err", err)
		}
	}()
	b.log.Info("metrics served without a key", "listen", ln.Addr().String())
	return nil
}

// Close stops the metrics listener and webhook and closes the audit log
// with a final signed checkpoint.
func (b *obs) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b.msrv != nil {
		_ = b.msrv.Shutdown(ctx)
	}
	err := b.audit.Close()
	if b.webhook != nil {
		wctx, wcancel := context.WithTimeout(context.Background(), max(b.drain, 0))
		b.webhook.Close(wctx)
		wcancel()
	}
	_ = b.tracer.Shutdown(ctx)
	return err
}

// fanout sends manager events to the audit log first: if it refuses an
// intent, the action does not happen and nothing else hears of it. Results
// and events (the action happened) reach every observer.
type fanout []sandbox.Observer

func (f fanout) Event(ctx context.Context, e sandbox.Event) error {
	var first error
	for _, o := range f {
		if err := o.Event(ctx, e); err != nil {
			if e.Phase == audit.PhaseIntent {
				return err
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// The Recorder is the surfaces' Auditor and the source of the API's audit
// and metrics routes.
var (
	_ api.Auditor                         = (*audit.Recorder)(nil)
	_ interface{ Reader() *audit.Reader } = (*audit.Recorder)(nil)
)
