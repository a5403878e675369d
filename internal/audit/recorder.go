package audit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// FailOpen lets actions proceed when their record cannot be written
	// (the failure is logged, and the log records the gap once it can).
	// The default refuses them.
	FailOpen bool
	// RequestID returns the API request id carried by a context (api.RequestID).
	RequestID func(context.Context) string
	// Webhook, if set, is sent every policy violation (see Violation).
	Webhook *Webhook
	// OnRoute, if set, hears the route pattern of each authenticated
	// request (the metrics' route label: metrics.NoteRoute).
	OnRoute func(ctx context.Context, route string)
	// Metrics is served by the API's GET /metrics (MetricsHandler).
	Metrics http.Handler
	Log     *slog.Logger
}

// Recorder binds a Log to the rest of the server: it is the manager's
// sandbox.Observer, the API's Auditor and the source of the audit (and
// metrics) routes.
type Recorder struct {
	log  *Log
	o    RecorderOptions
	slog *slog.Logger

	mu        sync.Mutex
	lastWarn  time.Time
	suppressd int
}

// NewRecorder returns a Recorder writing to l.
func NewRecorder(l *Log, o RecorderOptions) *Recorder {
	lg := o.Log
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	if o.RequestID == nil {
		o.RequestID = func(context.Context) string { return "" }
	}
	return &Recorder{log: l, o: o, slog: lg}
}

// Log is the underlying log.
func (r *Recorder) Log() *Log { return r.log }

// Event implements sandbox.Observer: one record per manager event. An
// error (only for a record that could not be written, and only when
// failing closed) makes the manager refuse an intent.
func (r *Recorder) Event(ctx context.Context, e sandbox.Event) error {
	en := Entry{Action: e.Kind, Phase: e.Phase, Actor: e.Actor, Tenant: e.Tenant, Sandbox: e.Sandbox,
		Request: r.o.RequestID(ctx), Error: e.Error, Code: e.Code, Duration: e.Duration}
	if len(e.Data) > 0 {
		if e.Phase == PhaseResult {
			en.Result = e.Data
		} else {
			en.Args = e.Data
		}
	}
	return r.append(ctx, en)
}

// append writes en; results and events are written even if the caller
// has gone (the action happened).
func (r *Recorder) append(ctx context.Context, en Entry) error {
	if en.Phase != PhaseIntent {
		ctx = context.WithoutCancel(ctx)
	}
	rec, err := r.log.Append(ctx, en)
	if err != nil {
		r.warn(en, err)
		if r.o.FailOpen {
			return nil
		}
		return err
	}
	if r.o.Webhook != nil {
		if reason, ok := Violation(&rec); ok {
			r.o.Webhook.Send(rec, reason)
		}
	}
	return nil
}

// warn logs a failed record, at most once a second (a dead disk would
// otherwise flood the log as fast as requests arrive).
func (r *Recorder) warn(en Entry, err error) {
	r.mu.Lock()
	now := time.Now()
	if now.Sub(r.lastWarn) < time.Second {
		r.suppressd++
		r.mu.Unlock()
		return
	}
	n := r.suppressd
	r.lastWarn, r.suppressd = now, 0
	r.mu.Unlock()
	verdict := "action refused"
	if r.o.FailOpen {
		verdict = "action allowed (fail-open)"
	}
	r.slog.Error("audit record not written; "+verdict, "action", en.Action, "phase", en.Phase, "err", err, "suppressed", n)
}

// httpArgs are the args of an API request record.
type httpArgs struct {
	Method string              `json:"method"`
	Route  string              `json:"route"`
	Path   string              `json:"path"`
	Query  map[string][]string `json:"query,omitempty"`
	Remote string              `json:"remote,omitempty"`
}

// Begin implements api.Auditor: the intent record of an authenticated
// request, before its handler runs; the returned func writes the result.
func (r *Recorder) Begin(req *http.Request, p auth.Principal, route string) (func(status int), error) {
	if r.o.OnRoute != nil {
		r.o.OnRoute(req.Context(), route)
	}
	if quiet(req, route) {
		return func(int) {}, nil
	}
	ctx := req.Context()
	_, pattern, _ := strings.Cut(route, " ")
	if pattern == "" {
		pattern = route
	}
	// {id} names a sandbox only under /v1/sandboxes/ (elsewhere it is a
	// key id, say: that stays in the path).
	sb := p.Sandbox
	switch {
	case strings.HasPrefix(pattern, "/v1/sandboxes/{id}"):
		sb = req.PathValue("id")
	case strings.Contains(pattern, "/sandboxes/{sandboxID}"): // the E2B control plane
		sb = req.PathValue("sandboxID")
	case sb == "" && req.Header.Get("E2b-Sandbox-Id") != "": // E2B's envd API
		sb = clip(req.Header.Get("E2b-Sandbox-Id"), 64)
	}
	args := httpArgs{Method: req.Method, Route: pattern, Path: clip(req.URL.Path, 512), Remote: remoteHost(req.RemoteAddr)}
	if q := req.URL.Query(); len(q) > 0 {
		args.Query = q
	}
	en := Entry{Action: ActionHTTP, Phase: PhaseIntent, Actor: p.KeyID, Tenant: p.Tenant, Sandbox: sb,
		Request: r.o.RequestID(ctx), Args: args}
	start := time.Now()
	if err := r.append(ctx, en); err != nil {
		return nil, err
	}
	sw, _ := ctx.Value(stateKey{}).(*gate.StatusWriter)
	return func(status int) {
		res := Entry{Action: ActionHTTP, Phase: PhaseResult, Actor: en.Actor, Tenant: en.Tenant, Sandbox: sb,
			Request: en.Request, Status: status, Duration: time.Since(start),
			Result: map[string]string{"method": req.Method, "route": pattern}}
		if sw != nil {
			res.Code = sw.Code()
		}
		_ = r.append(ctx, res)
	}, nil
}

// quiet requests are not recorded: continuation pages and long-polls of
// the audit log itself (a follower would otherwise record its own reads
// without end) and metrics scrapes.
func quiet(req *http.Request, route string) bool {
	switch route {
	case "GET /v1/audit":
		return req.URL.Query().Get("cursor") != ""
	case "GET /metrics":
		return true
	}
	return false
}

func remoteHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return clip(addr, 64)
}

// Query, Export and Wait serve the API's audit routes.
func (r *Recorder) Query(ctx context.Context, q Query) (Page, error) { return r.log.Query(ctx, q) }

// Export writes matching records as JSON lines.
func (r *Recorder) Export(ctx context.Context, q Query, w io.Writer) error {
	return r.log.Export(ctx, q, w)
}

// Wait blocks until a record after seq exists or ctx ends.
func (r *Recorder) Wait(ctx context.Context, seq uint64) bool { return r.log.Wait(ctx, seq) }

// MetricsHandler is RecorderOptions.Metrics (nil: none), for the API's
// GET /metrics, which finds it on the Auditor.
func (r *Recorder) MetricsHandler() http.Handler { return r.o.Metrics }

type stateKey struct{}

// Middleware (outside the API's mux) notes the error code of each error
// answer, for the request's result record and for the violation webhook
// (a 429 is either limit_exceeded or rate_limited).
func (r *Recorder) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		sw := gate.NewStatusWriter(w)
		next.ServeHTTP(sw, req.WithContext(context.WithValue(req.Context(), stateKey{}, sw)))
	})
}

// denials are the error codes of refused actions: policy violations.
var denials = map[string]bool{"forbidden": true, "limit_exceeded": true, "rate_limited": true}

// Violation reports whether rec is a policy violation worth telling a
// security team about, and why: a refused action (forbidden, over a limit
// or rate, any *_denied code, or a 403/429 answer), an OOM kill, a failed
// sandbox, or a denied network connection (an action ending in ".deny"
// or ".denied").
func Violation(rec *Record) (string, bool) {
	switch {
	case rec.Phase == PhaseResult && (denials[rec.Code] || strings.HasSuffix(rec.Code, "_denied")):
		return "denied:" + rec.Code, true
	case rec.Phase == PhaseResult && (rec.Status == http.StatusForbidden || rec.Status == http.StatusTooManyRequests):
		return "denied:http_" + http.StatusText(rec.Status), true
	case rec.Action == "sandbox.fail":
		return "sandbox_failed", true
	case strings.HasSuffix(rec.Action, ".deny") || strings.HasSuffix(rec.Action, ".denied"):
		return "denied:" + rec.Action, true
	case rec.Phase == PhaseResult && len(rec.Result) > 0:
		var res struct {
			OOMKilled bool `json:"oom_killed"`
		}
		if json.Unmarshal(rec.Result, &res) == nil && res.OOMKilled {
			return "oom_killed", true
		}
	}
	return "", false
}
