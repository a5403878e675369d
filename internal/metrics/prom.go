package metrics

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Options configure New.
type Options struct {
	// States, if set, counts sandboxes by state at scrape time (the
	// manager's view). Without it the gauge follows lifecycle events,
	// which miss sandboxes reattached after a restart until they are
	// next used.
	States func() map[string]int
	// PublicPaths are unauthenticated paths used as route labels as they
	// are (default /healthz, /openapi.json, /metrics).
	PublicPaths []string
	// Tracer, if set, also records a span per request and per manager
	// action.
	Tracer Tracer
}

// Metrics is the server's instrumentation, with its own registry.
type Metrics struct {
	reg    *prometheus.Registry
	public map[string]bool
	tracer Tracer

	sandboxes     *prometheus.GaugeVec
	lifecycle     *prometheus.CounterVec
	createLatency *prometheus.HistogramVec
	execLatency   prometheus.Observer
	execs         *prometheus.CounterVec
	egress        *prometheus.CounterVec
	errors        *prometheus.CounterVec
	httpReqs      *prometheus.CounterVec
	httpLatency   *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	auditAppend   prometheus.Observer
	auditSync     prometheus.Observer
	auditRecords  prometheus.Counter
	auditErrors   prometheus.Counter
	auditFree     prometheus.Gauge
	auditTotal    prometheus.Gauge
	auditLow      prometheus.Gauge
	auditLowSeen  prometheus.Counter
	auditWasLow   atomic.Bool

	mu     sync.Mutex
	states map[string]string // sandbox id → state, when following events
}

// New builds the metrics and registers them on a fresh registry.
func New(o Options) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg, states: map[string]string{}, public: map[string]bool{}, tracer: o.Tracer}
	if o.PublicPaths == nil {
		o.PublicPaths = []string{"/healthz", "/openapi.json", "/metrics"}
	}
	for _, p := range o.PublicPaths {
		m.public[p] = true
	}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	lat := func(name, help string, start float64, n int, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "paddock", Name: name, Help: help,
			Buckets: prometheus.ExponentialBuckets(start, 2, n)}, labels)
		f(h)
		return h
	}
	if o.States != nil {
		f(&stateCollector{fn: o.States, desc: prometheus.NewDesc("paddock_sandboxes", "Sandboxes by state.", []string{"state"}, nil)})
	} else {
		m.sandboxes = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "paddock", Name: "sandboxes",
			Help: "Sandboxes by state."}, []string{"state"})
		f(m.sandboxes)
		for _, s := range []string{string(sandbox.StateRunning), string(sandbox.StateFailed)} {
			m.sandboxes.WithLabelValues(s)
		}
	}
	m.lifecycle = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "paddock", Name: "sandbox_events_total",
		Help: "Sandbox lifecycle events: create, delete, expire, fail (results, by outcome)."}, []string{"event", "outcome"})
	f(m.lifecycle)
	m.createLatency = lat("sandbox_create_duration_seconds", "Time to create a sandbox.", 0.001, 15, "outcome")
	m.execLatency = lat("exec_duration_seconds", "Time an exec ran, as the guest measured it.", 0.0005, 18).WithLabelValues()
	m.execs = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "paddock", Name: "exec_total",
		Help: "Execs by outcome: ok, nonzero_exit, signaled, timeout, oom_killed, error."}, []string{"outcome"})
	f(m.execs)
	for _, o := range []string{OutcomeOK, OutcomeNonzero, OutcomeSignaled, OutcomeTimeout, OutcomeOOM, OutcomeError} {
		m.execs.WithLabelValues(o)
	}
	m.egress = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "paddock", Name: "egress_decisions_total",
		Help: "Egress proxy decisions, by decision (allow, deny) and the sandbox's network mode."}, []string{"decision", "mode"})
	f(m.egress)
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "paddock", Name: "errors_total",
		Help: "API error answers, by error code."}, []string{"code"})
	f(m.errors)
	m.httpReqs = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "paddock", Name: "http_requests_total",
		Help: "API requests, by route pattern, method and status."}, []string{"route", "method", "status"})
	f(m.httpReqs)
	m.httpLatency = lat("http_request_duration_seconds", "API request latency, by route pattern and method.", 0.0005, 16, "route", "method")
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "paddock", Name: "http_requests_in_flight",
		Help: "API requests being served."})
	f(m.inFlight)
	m.auditAppend = lat("audit_append_duration_seconds", "How long an action waited for its audit record (write, and fsync when the sync mode asks).", 0.00001, 16).WithLabelValues()
	m.auditSync = lat("audit_fsync_duration_seconds", "fsync time of one audit group commit.", 0.00001, 16).WithLabelValues()
	m.auditRecords = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "paddock", Name: "audit_records_total",
		Help: "Audit records written."})
	f(m.auditRecords)
	m.auditErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "paddock", Name: "audit_errors_total",
		Help: "Audit records that could not be written (their actions were refused, unless fail-open)."})
	f(m.auditErrors)
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "paddock", Name: name, Help: help})
		f(g)
		return g
	}
	m.auditFree = gauge("audit_disk_free_bytes", "Free bytes on the audit log's volume (a full one makes every audited action fail closed).")
	m.auditTotal = gauge("audit_disk_total_bytes", "Size of the audit log's volume.")
	m.auditLow = gauge("audit_disk_low", "1 while free space on the audit volume is below the low-disk alarm (--audit-min-free).")
	m.auditLowSeen = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "paddock", Name: "audit_disk_low_total",
		Help: "Times free space on the audit volume fell below the low-disk alarm."})
	f(m.auditLowSeen)
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the exposition of m's registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
}

// Registry is m's registry, for components that bring their own
// collectors.
func (m *Metrics) Registry() prometheus.Registerer { return m.reg }

// Event implements sandbox.Observer. It never refuses an action.
func (m *Metrics) Event(ctx context.Context, e sandbox.Event) error {
	traceEvent(m.tracer, ctx, e)
	outcome := "ok"
	if e.Error != "" {
		outcome = "error"
	}
	switch {
	case e.Kind == "sandbox.create" && e.Phase == "result":
		m.createLatency.WithLabelValues(outcome).Observe(e.Duration.Seconds())
		m.lifecycle.WithLabelValues("create", outcome).Inc()
		if outcome == "ok" {
			m.setState(e.Sandbox, string(sandbox.StateRunning))
		}
	case e.Kind == "sandbox.delete" && e.Phase == "result":
		m.lifecycle.WithLabelValues("delete", outcome).Inc()
		m.setState(e.Sandbox, "")
	case e.Kind == "sandbox.expire":
		m.lifecycle.WithLabelValues("expire", "ok").Inc()
		m.setState(e.Sandbox, "")
	case e.Kind == "sandbox.fail":
		m.lifecycle.WithLabelValues("fail", "ok").Inc()
		m.setState(e.Sandbox, string(sandbox.StateFailed))
	case e.Kind == "exec" && e.Phase == "result":
		o := ExecOutcome(e)
		m.execs.WithLabelValues(o).Inc()
		if o != OutcomeError {
			m.execLatency.Observe(e.Duration.Seconds())
			m.touch(e.Sandbox)
		}
	}
	return nil
}

// setState follows a sandbox's state from events ("" forgets it).
func (m *Metrics) setState(id, state string) {
	if m.sandboxes == nil || id == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.states[id]; ok {
		m.sandboxes.WithLabelValues(old).Dec()
	}
	if state == "" {
		delete(m.states, id)
		return
	}
	m.states[id] = state
	m.sandboxes.WithLabelValues(state).Inc()
}

// touch notes a sandbox seen running that the events had not introduced
// (one reattached after a restart).
func (m *Metrics) touch(id string) {
	if m.sandboxes == nil || id == "" {
		return
	}
	m.mu.Lock()
	_, known := m.states[id]
	m.mu.Unlock()
	if !known {
		m.setState(id, string(sandbox.StateRunning))
	}
}

// EgressDecision implements EgressRecorder.
func (m *Metrics) EgressDecision(allowed bool, mode string) {
	d := "deny"
	if allowed {
		d = "allow"
	}
	m.egress.WithLabelValues(d, clipLabel(mode)).Inc()
}

func clipLabel(s string) string {
	if len(s) > 32 {
		return s[:32]
	}
	return s
}

// AuditAppend implements audit.Stats.
func (m *Metrics) AuditAppend(wait time.Duration, err error) {
	if err != nil {
		m.auditErrors.Inc()
		return
	}
	m.auditAppend.Observe(wait.Seconds())
}

// AuditBatch implements audit.Stats.
func (m *Metrics) AuditBatch(records int, _, sync time.Duration, err error) {
	if err != nil {
		return
	}
	m.auditRecords.Add(float64(records))
	if sync > 0 {
		m.auditSync.Observe(sync.Seconds())
	}
}

// AuditDisk implements audit.DiskStats: the audit volume's space and the
// low-disk alarm.
func (m *Metrics) AuditDisk(free, total uint64, low bool) {
	m.auditFree.Set(float64(free))
	m.auditTotal.Set(float64(total))
	if low {
		m.auditLow.Set(1)
		if !m.auditWasLow.Swap(true) {
			m.auditLowSeen.Inc()
		}
	} else {
		m.auditLow.Set(0)
		m.auditWasLow.Store(false)
	}
}

// Middleware counts and times every API request by route pattern.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		r, ri := withReqInfo(r)
		r, span := startHTTP(m.tracer, r)
		rec := gate.NewStatusWriter(w)
		next.ServeHTTP(rec, r)
		status := rec.Status()
		route, method := routeLabel(ri, r, status, m.public), methodLabel(r.Method)
		endHTTP(span, method, route, status)
		m.httpReqs.WithLabelValues(route, method, statusLabel(status)).Inc()
		m.httpLatency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		if code := codeLabel(rec.Code()); code != "" {
			m.errors.WithLabelValues(code).Inc()
		}
	})
}

// stateCollector asks for sandboxes by state at scrape time.
type stateCollector struct {
	fn   func() map[string]int
	desc *prometheus.Desc
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for state, n := range c.fn() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), clipLabel(state))
	}
}
