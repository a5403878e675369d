package metrics

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/paddockhq/paddock/internal/sandbox"
)

// EgressRecorder is what the egress proxy reports to: one call per
// connection or DNS decision. mode is the sandbox's network mode
// ("allowlist", "open", ...). *Metrics implements it; pass Nop where no
// metrics are wanted.
type EgressRecorder interface {
	EgressDecision(allowed bool, mode string)
}

// Nop is an EgressRecorder that records nothing.
type Nop struct{}

// EgressDecision implements EgressRecorder.
func (Nop) EgressDecision(bool, string) {}

// Exec outcomes (the outcome label of paddock_exec_total).
const (
	OutcomeOK       = "ok"           // exit status 0
	OutcomeNonzero  = "nonzero_exit" // ran, exited non-zero
	OutcomeSignaled = "signaled"     // killed by a signal (not OOM, not timeout)
	OutcomeTimeout  = "timeout"      // killed at its timeout
	OutcomeOOM      = "oom_killed"   // killed by the memory ceiling
	OutcomeError    = "error"        // could not run (refused, sandbox gone, ...)
)

// ExecOutcome classifies the result event of an exec.
func ExecOutcome(e sandbox.Event) string {
	if e.Error != "" {
		return OutcomeError
	}
	b := func(k string) bool { v, _ := e.Data[k].(bool); return v }
	switch {
	case b("oom_killed"):
		return OutcomeOOM
	case b("timed_out"):
		return OutcomeTimeout
	}
	if s, ok := e.Data["signal"]; ok && !isZero(s) {
		return OutcomeSignaled
	}
	if c, ok := e.Data["exit_code"]; ok && !isZero(c) {
		return OutcomeNonzero
	}
	return OutcomeOK
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case int:
		return x == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	case string:
		return x == "" || x == "0"
	case json.Number:
		return x == "0"
	}
	return false
}

type routeKey struct{}

// reqInfo is filled in while a request is served, for its metrics.
type reqInfo struct {
	route string
}

// NoteRoute tells the metrics middleware the route pattern a request
// matched (the API's Auditor hook knows it; the middleware, outside the
// mux, does not). Routes are labels: raw paths never are.
func NoteRoute(ctx context.Context, route string) {
	if ri, ok := ctx.Value(routeKey{}).(*reqInfo); ok {
		ri.route = route
	}
}

func withReqInfo(r *http.Request) (*http.Request, *reqInfo) {
	ri := &reqInfo{}
	return r.WithContext(context.WithValue(r.Context(), routeKey{}, ri)), ri
}

// routeLabel bounds the route label: a noted pattern, a known public
// path, or one of a few fixed words.
func routeLabel(ri *reqInfo, r *http.Request, status int, public map[string]bool) string {
	switch {
	case ri.route != "":
		_, p, ok := cutSpace(ri.route)
		if ok {
			return p
		}
		return ri.route
	case public[r.URL.Path]:
		return r.URL.Path
	case status == http.StatusUnauthorized:
		return "(unauthenticated)"
	case status == http.StatusNotFound:
		return "(unmatched)"
	}
	return "(other)"
}

func cutSpace(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// methodLabel bounds the method label to the methods the API serves.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// codeLabel bounds the error-code label to the codes' shape: at most 40
// bytes of [a-z_], else "" (never a free-form label).
func codeLabel(code string) string {
	if len(code) > 40 {
		return ""
	}
	for _, c := range code {
		if (c < 'a' || c > 'z') && c != '_' {
			return "" // not one of ours
		}
	}
	return code
}

func statusLabel(s int) string { return strconv.Itoa(s) }
