package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/sandbox"
)

// Attr is one span attribute; Value is a string, bool, int, int64 or
// float64.
type Attr struct {
	Key   string
	Value any
}

// Span is a span being recorded.
type Span interface {
	SetName(name string)
	SetAttributes(attrs ...Attr)
	End(failed bool)
}

// Tracer is optional distributed tracing. The OpenTelemetry (OTLP/HTTP)
// implementation is NewOTLPTracer; NopTracer records nothing. Keeping
// OpenTelemetry behind this interface lets everything else build without
// its modules.
type Tracer interface {
	// Start begins a span, continuing the trace of incoming headers
	// (W3C traceparent) when h carries one.
	Start(ctx context.Context, name string, h http.Header) (context.Context, Span)
	// Record adds a finished span (a manager action known from its
	// result event) under ctx's span.
	Record(ctx context.Context, name string, start, end time.Time, failed bool, attrs ...Attr)
	// Shutdown flushes what is buffered.
	Shutdown(ctx context.Context) error
}

// NopTracer records nothing.
type NopTracer struct{}

type nopSpan struct{}

func (nopSpan) SetName(string)        {}
func (nopSpan) SetAttributes(...Attr) {}
func (nopSpan) End(bool)              {}

// Start implements Tracer.
func (NopTracer) Start(ctx context.Context, _ string, _ http.Header) (context.Context, Span) {
	return ctx, nopSpan{}
}

// Record implements Tracer.
func (NopTracer) Record(context.Context, string, time.Time, time.Time, bool, ...Attr) {}

// Shutdown implements Tracer.
func (NopTracer) Shutdown(context.Context) error { return nil }

func isNop(t Tracer) bool {
	_, nop := t.(NopTracer)
	return t == nil || nop
}

// startHTTP starts the span of an API request (named when its route is
// known, at the end).
func startHTTP(t Tracer, r *http.Request) (*http.Request, Span) {
	if isNop(t) {
		return r, nopSpan{}
	}
	ctx, sp := t.Start(r.Context(), "HTTP "+methodLabel(r.Method), r.Header)
	return r.WithContext(ctx), sp
}

func endHTTP(sp Span, method, route string, status int) {
	sp.SetName(method + " " + route)
	sp.SetAttributes(Attr{"http.request.method", method}, Attr{"http.route", route}, Attr{"http.response.status_code", status})
	sp.End(status >= 500)
}

// traceEvent turns a manager result (or event) into a span under the
// request's span.
func traceEvent(t Tracer, ctx context.Context, e sandbox.Event) {
	if isNop(t) || e.Phase == "intent" {
		return
	}
	end := e.Time
	if end.IsZero() {
		end = time.Now()
	}
	attrs := []Attr{{"paddock.sandbox", e.Sandbox}, {"paddock.tenant", e.Tenant}, {"paddock.phase", e.Phase}}
	if e.Actor != "" {
		attrs = append(attrs, Attr{"paddock.actor", e.Actor})
	}
	if e.Kind == "exec" && e.Phase == "result" {
		attrs = append(attrs, Attr{"paddock.exec.outcome", ExecOutcome(e)})
	}
	t.Record(ctx, e.Kind, end.Add(-e.Duration), end, e.Error != "", attrs...)
}
