package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// obsFlags are serve's audit and observability options.
type obsFlags struct {
	sync               string
	syncInterval       time.Duration
	failOpen           bool
	webhook            string
	segmentSize        string
	maxSegments        int
	maxBytes           string
	maxAge             time.Duration
	archiveDir         string
	minFree            string
	checkpointEvery    int
	checkpointInterval time.Duration
	metricsListen      string
	otlpEndpoint       string
}

func (o *obsFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.sync, "audit-sync", string(audit.SyncInterval), "when audit records are fsync'd: always (every record before its action goes on), batch (intents before their action, results within --audit-sync-interval), interval (every --audit-sync-interval). Every mode writes a record to the file before its action: a crash of the server loses none; the modes differ on power loss (docs/audit.md)")
	fs.DurationVar(&o.syncInterval, "audit-sync-interval", 10*time.Millisecond, "longest a written audit record waits for fsync (batch, interval)")
	fs.BoolVar(&o.failOpen, "audit-fail-open", false, "let actions proceed when the audit log cannot be written (logged, and the gap recorded); default: refuse them (503)")
	fs.StringVar(&o.webhook, "audit-webhook", "", "POST policy violations (denials, limit hits, OOM kills, sandbox failures) as JSON to this URL")
	fs.StringVar(&o.segmentSize, "audit-segment-size", "64M", "start a new audit segment file at this size")
	fs.IntVar(&o.maxSegments, "audit-max-segments", 0, "keep at most this many audit segments, deleting the oldest (recorded in the log); 0 keeps all")
	fs.StringVar(&o.maxBytes, "audit-max-bytes", "", "keep at most this much audit log (e.g. 10G), expiring the oldest sealed segments (recorded in the log; verify still checks what remains); default: keep all")
	fs.DurationVar(&o.maxAge, "audit-max-age", 0, "expire sealed audit segments older than this (e.g. 2160h); 0 keeps them")
	fs.StringVar(&o.archiveDir, "audit-archive-dir", "", "move expired audit segments to this directory instead of deleting them")
	fs.StringVar(&o.minFree, "audit-min-free", "", "warn (log and metric paddock_audit_disk_low) when the audit volume has less free space than this (default: 4 segments, at least 256M); the log fails closed only when the disk is full")
	fs.IntVar(&o.checkpointEvery, "audit-checkpoint-every", 1000, "records between signed audit checkpoints")
	fs.DurationVar(&o.checkpointInterval, "audit-checkpoint-interval", time.Minute, "longest time between signed audit checkpoints")
	fs.StringVar(&o.metricsListen, "metrics-listen", "", "also serve /metrics without a key on this loopback address (e.g. 127.0.0.1:9464); the API's /metrics needs the admin key")
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "send OpenTelemetry traces over OTLP/HTTP to this host:port or URL (needs a build with the paddock_otel tag)")
}

// obs is the audit log and the metrics, and the hooks they give the
// manager and the API.
type obs struct {
	log      *slog.Logger
	audit    *audit.Log
	rec      *audit.Recorder
	webhook  *audit.Webhook
	metrics  *metrics.Metrics
	tracer   metrics.Tracer
	msrv     *http.Server
	Observer sandbox.Observer
	Auditor  api.Auditor
}

// startObs opens DATA/audit and builds the metrics. Close it after the
// manager, so that the manager's last events are recorded.
func startObs(f *serveFlags, log *slog.Logger) (*obs, error) {
	o := &f.obs
	mode, err := audit.ParseSyncMode(o.sync)
	if err != nil {
		return nil, fmt.Errorf("--audit-sync: %w", err)
	}
	segMB, err := parseSizeMB(o.segmentSize)
	if err != nil {
		return nil, fmt.Errorf("--audit-segment-size: %w", err)
	}
	var maxBytes, minFree int64
	if o.maxBytes != "" {
		mb, err := parseSizeMB(o.maxBytes)
		if err != nil {
			return nil, fmt.Errorf("--audit-max-bytes: %w", err)
		}
		maxBytes = mb << 20
	}
	if o.minFree != "" {
		mb, err := parseSizeMB(o.minFree)
		if err != nil {
			return nil, fmt.Errorf("--audit-min-free: %w", err)
		}
		minFree = max(mb<<20, 1)
	}
	if o.maxAge < 0 {
		return nil, errors.New("--audit-max-age: must not be negative")
	}
	if o.metricsListen != "" {
		if err := loopbackOnly(o.metricsListen, f.insecureListen); err != nil {
			return nil, err
		}
	}
	var tracer metrics.Tracer = metrics.NopTracer{}
	if o.otlpEndpoint != "" {
		if tracer, err = metrics.NewOTLPTracer(context.Background(), o.otlpEndpoint, version); err != nil {
			return nil, fmt.Errorf("--otlp-endpoint: %w", err)
		}
	}
	m := metrics.New(metrics.Options{Tracer: tracer})
	l, err := audit.Open(audit.Options{Dir: filepath.Join(f.data, "audit"), Sync: mode, SyncInterval: o.syncInterval,
		SegmentBytes: segMB << 20, MaxSegments: o.maxSegments, MaxBytes: maxBytes, MaxAge: o.maxAge, ArchiveDir: o.archiveDir,
		MinFreeBytes: minFree, CheckpointEvery: o.checkpointEvery,
		CheckpointInterval: o.checkpointInterval, Version: version, Log: log, Stats: m})
	if err != nil {
		_ = tracer.Shutdown(context.Background())
		return nil, fmt.Errorf("audit log: %w", err)
	}
	b := &obs{log: log, audit: l, metrics: m, tracer: tracer}
	if o.webhook != "" {
		if b.webhook, err = audit.NewWebhook(audit.WebhookOptions{URL: o.webhook, Signer: l.SigningKey(), Log: log}); err != nil {
			l.Close()
			return nil, fmt.Errorf("--audit-webhook: %w", err)
		}
	}
	b.rec = audit.NewRecorder(l, audit.RecorderOptions{FailOpen: o.failOpen, RequestID: api.RequestID, Webhook: b.webhook,
		OnRoute: metrics.NoteRoute, Metrics: m.Handler(), Log: log})
	b.Observer = fanout{b.rec, m}
	b.Auditor = b.rec // also the source of GET /v1/audit and GET /metrics
	if o.failOpen {
		log.Warn("audit log is fail-open: actions proceed when their records cannot be written")
	}
	if o.metricsListen != "" {
		if err := b.serveMetrics(o.metricsListen); err != nil {
			b.Close()
			return nil, err
		}
	}
	log.Info("audit log open", "dir", l.Dir(), "sync", string(mode), "signer", audit.Fingerprint(l.PublicKey()))
	return b, nil
}

// middleware is the API's middleware list around the hardening one:
// metrics outermost (they count what hardening refuses too), the audit's
// error-code capture innermost.
func (b *obs) middleware(harden ...func(http.Handler) http.Handler) []func(http.Handler) http.Handler {
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
		b.webhook.Close(ctx)
	}
	_ = b.tracer.Shutdown(ctx)
	return err
}

// loopbackOnly refuses to serve keyless metrics beyond this host.
func loopbackOnly(addr string, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) || insecure {
		return nil
	}
	return fmt.Errorf("--metrics-listen %s: metrics without a key are served on loopback only (or pass --insecure-listen)", addr)
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

// The Recorder is the API's Auditor and the source of its audit and
// metrics routes.
var (
	_ api.Auditor       = (*audit.Recorder)(nil)
	_ api.AuditSource   = (*audit.Recorder)(nil)
	_ api.MetricsSource = (*audit.Recorder)(nil)
)
