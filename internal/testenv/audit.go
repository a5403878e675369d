package testenv

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// AuditOptions configure the stack's audit log and metrics. By default
// every stack keeps an audit log in DATA/audit (fail closed, as serve),
// so every integration test exercises it.
type AuditOptions struct {
	// Disable runs the stack without an Observer or Auditor (the bare path,
	// for benchmarks that measure what the audit log adds).
	Disable         bool
	Sync            audit.SyncMode // default: the log's (interval), as serve
	FailOpen        bool
	Webhook         string // violation webhook URL
	SegmentBytes    int64
	CheckpointEvery int
}

// envObs is the stack's audit log and metrics.
type envObs struct {
	log     *audit.Log
	rec     *audit.Recorder
	metrics *metrics.Metrics
	webhook *audit.Webhook
	// closing lets cleanup delete sandboxes even when a test broke the
	// log on purpose (a fail-closed log would refuse the deletes).
	closing atomic.Bool
}

func openObs(dataDir string, o AuditOptions, log *slog.Logger) (*envObs, error) {
	if o.Disable {
		return nil, nil
	}
	m := metrics.New(metrics.Options{})
	l, err := audit.Open(audit.Options{Dir: filepath.Join(dataDir, "audit"), Sync: o.Sync, SegmentBytes: o.SegmentBytes,
		CheckpointEvery: o.CheckpointEvery, Version: "test", Log: log, Stats: m})
	if err != nil {
		return nil, err
	}
	ob := &envObs{log: l, metrics: m}
	if o.Webhook != "" {
		if ob.webhook, err = audit.NewWebhook(audit.WebhookOptions{URL: o.Webhook, Signer: l.SigningKey(), Log: log}); err != nil {
			l.Close()
			return nil, err
		}
	}
	ob.rec = audit.NewRecorder(l, audit.RecorderOptions{FailOpen: o.FailOpen, RequestID: api.RequestID, Webhook: ob.webhook,
		OnRoute: metrics.NoteRoute, Metrics: m.Handler(), Log: log})
	return ob, nil
}

// observer is the manager's Observer (a nil interface when disabled).
func (ob *envObs) observer() sandbox.Observer {
	if ob == nil {
		return nil
	}
	return envObserver{ob}
}

type envObserver struct{ ob *envObs }

func (o envObserver) Event(ctx context.Context, e sandbox.Event) error {
	err := o.ob.rec.Event(ctx, e)
	_ = o.ob.metrics.Event(ctx, e)
	if o.ob.closing.Load() {
		return nil
	}
	return err
}

// auditor is the API's Auditor (a nil interface when disabled).
func (ob *envObs) auditor() api.Auditor {
	if ob == nil {
		return nil
	}
	return ob.rec
}

// middleware wraps inner (hardening) the way serve does: metrics outside,
// the audit's error-code capture inside.
func (ob *envObs) middleware(inner ...func(http.Handler) http.Handler) []func(http.Handler) http.Handler {
	if ob == nil {
		return inner
	}
	out := append([]func(http.Handler) http.Handler{ob.metrics.Middleware}, inner...)
	return append(out, ob.rec.Middleware)
}

func (ob *envObs) close() {
	if ob == nil {
		return
	}
	_ = ob.log.Close()
	if ob.webhook != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		ob.webhook.Close(ctx)
	}
}

// AuditLog is the stack's audit log (nil with Audit.Disable).
func (e *Env) AuditLog() *audit.Log {
	if e.obs == nil {
		return nil
	}
	return e.obs.log
}

// AuditDir is where the audit log lives (DATA/audit).
func (e *Env) AuditDir() string { return filepath.Join(e.Data, "audit") }

// AuditRecords returns the records matching q, each checked with
// audit.ParseLine (hash and canonical form), oldest first.
func (e *Env) AuditRecords(q audit.Query) []audit.Record {
	e.T.Helper()
	l := e.AuditLog()
	if l == nil {
		e.T.Fatal("testenv: this stack has no audit log")
	}
	var buf bytes.Buffer
	if err := l.Export(context.Background(), q, &buf); err != nil {
		e.T.Fatalf("testenv: read audit log: %v", err)
	}
	var out []audit.Record
	for _, line := range bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r, err := audit.ParseLine(line)
		if err != nil {
			e.T.Fatalf("testenv: audit record does not verify: %v\n%s", err, line)
		}
		out = append(out, r)
	}
	return out
}

// MetricsText is a scrape of the stack's metrics.
func (e *Env) MetricsText() string {
	e.T.Helper()
	if e.obs == nil {
		e.T.Fatal("testenv: this stack has no metrics")
	}
	rr := httptest.NewRecorder()
	e.obs.metrics.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rr.Body)
	return string(b)
}

// stopRefusing lets cleanup proceed whatever state a test left the log in.
func (ob *envObs) stopRefusing() {
	if ob != nil {
		ob.closing.Store(true)
	}
}
