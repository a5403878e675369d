package testenv

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/server"
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

// config is the server's audit configuration: serve's defaults but for
// a webhook nobody waits for at Close.
func (o AuditOptions) config() server.AuditConfig {
	return server.AuditConfig{Disable: o.Disable, Sync: o.Sync, FailOpen: o.FailOpen, Webhook: o.Webhook,
		SegmentBytes: o.SegmentBytes, CheckpointEvery: o.CheckpointEvery, WebhookDrain: -1}
}

// observer wraps the manager's Observer (the audit log, then metrics):
// once the stack closes its errors are dropped, so that cleanup can delete
// sandboxes even when a test broke the log on purpose (a fail-closed log
// would refuse the deletes).
func (e *Env) observer(next sandbox.Observer) sandbox.Observer {
	if next == nil {
		return nil
	}
	return envObserver{next: next, closing: &e.closing}
}

type envObserver struct {
	next    sandbox.Observer
	closing *atomic.Bool
}

func (o envObserver) Event(ctx context.Context, ev sandbox.Event) error {
	err := o.next.Event(ctx, ev)
	if o.closing.Load() {
		return nil
	}
	return err
}

// AuditLog is the stack's audit log (nil with Audit.Disable).
func (e *Env) AuditLog() *audit.Log {
	if e.Stack == nil {
		return nil
	}
	return e.Stack.AuditLog()
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
	if e.Stack == nil || e.Stack.Metrics() == nil {
		e.T.Fatal("testenv: this stack has no metrics")
	}
	rr := httptest.NewRecorder()
	e.Stack.Metrics().Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rr.Body)
	return string(b)
}
