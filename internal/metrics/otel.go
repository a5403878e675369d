//go:build paddock_otel

package metrics

// OpenTelemetry tracing over OTLP/HTTP. Needs, in go.mod:
//
//	go get go.opentelemetry.io/otel@v1.47.0 go.opentelemetry.io/otel/sdk@v1.47.0 \
//	    go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp@v1.47.0
//
// and the paddock_otel build tag.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// NewOTLPTracer exports spans over OTLP/HTTP to endpoint: "host:port"
// (plain HTTP, e.g. a local collector) or a URL ("https://collector:4318",
// path /v1/traces by default). Nothing is registered globally.
func NewOTLPTracer(ctx context.Context, endpoint, version string) (Tracer, error) {
	var opts []otlptracehttp.Option
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("OTLP endpoint %q: want host:port or an http(s) URL", endpoint)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces" // the exporter would post to "/" otherwise
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	} else {
		opts = append(opts, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "paddock"), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &otelTracer{tp: tp, tr: tp.Tracer("github.com/paddockhq/paddock"), prop: propagation.TraceContext{}}, nil
}

type otelTracer struct {
	tp   *sdktrace.TracerProvider
	tr   trace.Tracer
	prop propagation.TraceContext
}

func (t *otelTracer) Start(ctx context.Context, name string, h http.Header) (context.Context, Span) {
	if h != nil {
		ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(h))
	}
	ctx, sp := t.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	return ctx, otelSpan{sp}
}

func (t *otelTracer) Record(ctx context.Context, name string, start, end time.Time, failed bool, attrs ...Attr) {
	_, sp := t.tr.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(kvs(attrs)...))
	if failed {
		sp.SetStatus(codes.Error, "")
	}
	sp.End(trace.WithTimestamp(end))
}

func (t *otelTracer) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

type otelSpan struct{ sp trace.Span }

func (s otelSpan) SetName(n string)            { s.sp.SetName(n) }
func (s otelSpan) SetAttributes(attrs ...Attr) { s.sp.SetAttributes(kvs(attrs)...) }
func (s otelSpan) End(failed bool) {
	if failed {
		s.sp.SetStatus(codes.Error, "")
	}
	s.sp.End()
}

func kvs(attrs []Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.Value.(type) {
		case string:
			out = append(out, attribute.String(a.Key, v))
		case bool:
			out = append(out, attribute.Bool(a.Key, v))
		case int:
			out = append(out, attribute.Int(a.Key, v))
		case int64:
			out = append(out, attribute.Int64(a.Key, v))
		case float64:
			out = append(out, attribute.Float64(a.Key, v))
		default:
			out = append(out, attribute.String(a.Key, fmt.Sprint(v)))
		}
	}
	return out
}
