package gate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// fakeAuth knows three credentials.
type fakeAuth struct{}

func (fakeAuth) Authenticate(_ context.Context, cred string) (auth.Principal, error) {
	switch cred {
	case "reader":
		return auth.Principal{KeyID: "k1", Tenant: "a", Scopes: []auth.Scope{auth.ScopeRead}}, nil
	case "token":
		return auth.Principal{KeyID: "k1", Tenant: "a", Scopes: []auth.Scope{auth.ScopeExec}, Sandbox: "sb-1", TokenID: "tok_1"}, nil
	case "broken":
		return auth.Principal{}, errors.New("disk on fire")
	}
	return auth.Principal{}, errs.ErrUnauthenticated
}

// recorder is an Auditor that can refuse.
type recorder struct {
	fail   bool
	routes []string
	ends   []int
}

func (a *recorder) Begin(r *http.Request, p auth.Principal, route string) (func(int), error) {
	if a.fail {
		return nil, errors.New("log full")
	}
	a.routes = append(a.routes, route+" "+p.KeyID)
	return func(status int) { a.ends = append(a.ends, status) }, nil
}

var (
	errMissing = errs.New(errs.CodeUnauthenticated, "no credential")
	errInvalid = errs.New(errs.CodeUnauthenticated, "bad credential")
	errDown    = errs.New(errs.CodeUnavailable, "cannot check")
)

func surface(vet func(*http.Request, auth.Principal) error) Surface {
	return Surface{
		Credential: func(r *http.Request) (string, error) {
			if c := r.Header.Get("X-Cred"); c != "" {
				return c, nil
			}
			return "", errMissing
		},
		Invalid: errInvalid, Unavailable: errDown, Vet: vet,
		Fail: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set("X-Code", string(errs.CodeOf(err)))
			http.Error(w, errs.Public(err), errs.HTTPStatus(errs.CodeOf(err)))
		},
	}
}

func TestWrap(t *testing.T) {
	var ran int
	var seen rights.Scope
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran++
		seen = Scope(r.Context())
		w.WriteHeader(http.StatusTeapot)
	})
	vet := func(r *http.Request, p auth.Principal) error {
		if p.Sandbox != "" && p.Sandbox != r.Header.Get("X-Sandbox") {
			return errs.NotFound("sandbox not found")
		}
		return nil
	}
	for _, tc := range []struct {
		name, cred, sandbox string
		need                rights.Right
		auditFail           bool
		status              int
		body                string
		audited, runs       bool
	}{
		{name: "no credential", status: 401, body: "no credential"},
		{name: "wrong credential", cred: "nope", status: 401, body: "bad credential"},
		{name: "authenticator down", cred: "broken", status: 503, body: "cannot check"},
		{name: "audit log down: fail closed", cred: "reader", need: rights.Read, auditFail: true, status: 503,
			body: "the audit log cannot be written; refusing to act"},
		{name: "vetted away, on the record", cred: "token", sandbox: "sb-2", need: rights.Exec, status: 404, audited: true},
		// The vet comes before the right: another sandbox is not found,
		// whatever the token may do.
		{name: "vet before right", cred: "token", sandbox: "sb-2", need: rights.Write, status: 404, audited: true},
		{name: "lacks the right, on the record", cred: "reader", need: rights.Exec, status: 403,
			body: `this key lacks the "exec" scope`, audited: true},
		{name: "token lacks the right", cred: "token", sandbox: "sb-1", need: rights.Read, status: 403,
			body: `this token lacks the "read" scope`, audited: true},
		{name: "holds the right", cred: "reader", need: rights.Read, status: 418, audited: true, runs: true},
		{name: "no right declared", cred: "reader", status: 418, audited: true, runs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = 0
			rec := &recorder{fail: tc.auditFail}
			g := New(fakeAuth{}, rec, nil, surface(vet))
			r := httptest.NewRequest("GET", "/x", nil)
			if tc.cred != "" {
				r.Header.Set("X-Cred", tc.cred)
			}
			r.Header.Set("X-Sandbox", tc.sandbox)
			w := httptest.NewRecorder()
			g.Wrap("GET /x", tc.need, h).ServeHTTP(w, r)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.body) {
				t.Fatalf("%d %q, want %d %q", w.Code, w.Body.String(), tc.status, tc.body)
			}
			if (ran == 1) != tc.runs {
				t.Fatalf("handler ran %d times", ran)
			}
			if tc.audited != (len(rec.routes) == 1) {
				t.Fatalf("audited %v", rec.routes)
			}
			if tc.audited && (len(rec.ends) != 1 || rec.ends[0] != tc.status || rec.routes[0] != "GET /x k1") {
				t.Fatalf("record %v ended with %v, want status %d", rec.routes, rec.ends, tc.status)
			}
			if tc.runs && (seen.Tenant != "a" || seen.Actor != "k1" || !seen.Can(rights.Read) || seen.Can(rights.Write)) {
				t.Fatalf("handler saw scope %+v", seen)
			}
		})
	}
}

// Without an Auditor requests are served, not recorded; the status
// writer is not in the way.
func TestWrapWithoutAuditor(t *testing.T) {
	g := New(fakeAuth{}, nil, nil, surface(nil))
	r := httptest.NewRequest("GET", "/x", nil)
	r.Header.Set("X-Cred", "reader")
	w := httptest.NewRecorder()
	g.Wrap("GET /x", rights.Read, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := Principal(r.Context()); !ok || p.KeyID != "k1" {
			t.Errorf("principal %+v %v", p, ok)
		}
		if p, ok := auth.FromContext(r.Context()); !ok || p.KeyID != "k1" {
			t.Errorf("auth principal %+v %v", p, ok)
		}
		w.WriteHeader(204)
	})).ServeHTTP(w, r)
	if w.Code != 204 {
		t.Fatal(w.Code)
	}
	if sc := Scope(context.Background()); sc.Rights != 0 || sc.Tenant != "" {
		t.Fatalf("a context without a caller has scope %+v", sc)
	}
}

func TestStatusWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	sw := NewStatusWriter(rec)
	if sw.Status() != 200 {
		t.Fatal(sw.Status())
	}
	sw.WriteHeader(201)
	sw.Flush()
	if sw.Status() != 201 || rec.Code != 201 || !rec.Flushed || sw.Unwrap() != rec {
		t.Fatalf("%d %d %v", sw.Status(), rec.Code, rec.Flushed)
	}
	if sw.Code() != "" {
		t.Fatalf("a success has code %q", sw.Code())
	}

	// An error answer: its first final status is kept (net/http sends that
	// one), a 1xx before it is not, and its code is read from the body.
	rec = httptest.NewRecorder()
	sw = NewStatusWriter(rec)
	sw.WriteHeader(http.StatusEarlyHints)
	sw.WriteHeader(http.StatusTooManyRequests)
	sw.WriteHeader(http.StatusOK)
	_, _ = sw.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
	_, _ = sw.Write([]byte(`{"error":{"code":"other"}}`))
	if sw.Status() != http.StatusTooManyRequests || sw.Code() != "rate_limited" {
		t.Fatalf("status %d code %q", sw.Status(), sw.Code())
	}
	for body, want := range map[string]string{
		`{"error":{"code":"not_found"}}`: "not_found",
		`<html>`:                         "",
		`{"error":{"code":"` + strings.Repeat("x", 65) + `"}}`: "",
		`{"error":`: "",
	} {
		if got := ErrorCode([]byte(body)); got != want {
			t.Errorf("ErrorCode(%q) = %q, want %q", body, got, want)
		}
	}
	if !Is(errMissing, errMissing) || Is(errInvalid, errMissing) || !Is(errs.Wrap(errs.CodeInternal, errMissing, "x"), errMissing) {
		t.Fatal("Is")
	}
}

// fakeLimit allows n requests per key, then refuses, saying first once.
type fakeLimit struct {
	n     int
	taken map[string]int
}

func (f *fakeLimit) Take(key string, _ time.Time) (bool, time.Duration, bool) {
	f.taken[key]++
	c := f.taken[key]
	if c <= f.n {
		return true, 0, false
	}
	return false, 1500 * time.Millisecond, c == f.n+1
}

func (f *fakeLimit) Rate() float64 { return 2 }

// Disk exhaustion through the audit log: each key is held to its rate
// (429, Retry-After rounded up), only its first refusal is recorded, the
// handler never runs; tokens share their minting key's bucket, another
// key has its own. Positive control: the first n requests are served.
func TestRateLimit(t *testing.T) {
	rec := &recorder{}
	lim := &fakeLimit{n: 2, taken: map[string]int{}}
	s := surface(nil)
	s.Limit = lim
	ran := 0
	g := New(fakeAuth{}, rec, nil, s)
	h := g.Wrap("GET /x", 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ }))
	do := func(cred string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/x", nil)
		r.Header.Set("X-Cred", cred)
		h.ServeHTTP(w, r)
		return w
	}
	for i, want := range []int{200, 200, 429, 429, 429} {
		cred := "reader"
		if i == 1 {
			cred = "token" // same key k1
		}
		w := do(cred)
		if w.Code != want {
			t.Fatalf("request %d: %d, want %d", i, w.Code, want)
		}
		if want == 429 && (w.Header().Get("Retry-After") != "2" || w.Header().Get("X-Code") != string(errs.CodeRateLimited) ||
			!strings.Contains(w.Body.String(), "retry after 2 s")) {
			t.Fatalf("request %d: %v %q", i, w.Header(), w.Body.String())
		}
	}
	if ran != 2 {
		t.Fatalf("the handler ran %d times, want 2", ran)
	}
	if len(rec.routes) != 3 || rec.ends[2] != http.StatusTooManyRequests {
		t.Fatalf("records %v %v: want the two served and the first refusal only", rec.routes, rec.ends)
	}
	if lim.taken["k1"] != 5 || lim.taken["tok_1"] != 0 {
		t.Fatalf("buckets %v: a token must count against its key", lim.taken)
	}
}
