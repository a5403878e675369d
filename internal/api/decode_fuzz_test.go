package api

import (
	"bytes"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// FuzzDecode: every JSON request body goes through decode. It never
// panics, refuses deep nesting and oversized bodies, and refuses with an
// invalid_argument or too_large answer only.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{}`, ``, `   `, `{"cmd":["true"],"env":{"A":"b"}}`, `{"cmd":["x"]} {"cmd":["y"]}`, `{"unknown":1}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`, `{"cmd":"\ud800"}`, `{"timeout_ms":1e400}`, `{"cmd":["a"],}`,
		`"a string"`, `null`, `{"cwd":"` + string(bytes.Repeat([]byte("x"), 5000)) + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v sandbox.ExecRequest
		err := decode(httptest.NewRequest("POST", "/", bytes.NewReader(body)), &v)
		if err != nil {
			if c := errs.CodeOf(err); c != errs.CodeInvalid && c != errs.CodeTooLarge {
				t.Fatalf("decode refused with %s: %v", c, err)
			}
			return
		}
		if depth(body) > maxJSONDepth || len(body) > MaxJSONBody {
			t.Fatalf("accepted a body of depth %d and %d bytes", depth(body), len(body))
		}
	})
}

// FuzzAuditQuery: the query string of GET /v1/audit. Never panics; what
// is accepted stays within the page bounds.
func FuzzAuditQuery(f *testing.F) {
	for _, s := range []string{"", "sandbox=sb-x&action=sandbox.*&since=1h&limit=10", "tail=5&cursor=99", "since=2026-01-01T00:00:00Z&until=-5m",
		"limit=-1", "limit=100000", "cursor=abc", "since=9999999999h", "action=%ff%fe", "until=1e9h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return
		}
		r := httptest.NewRequest("GET", "/v1/audit", nil)
		r.URL.RawQuery = raw
		q, err := auditQueryOf(r)
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Fatalf("refused with %s: %v", errs.CodeOf(err), err)
			}
			return
		}
		if q.Limit < 0 || q.Limit > audit.MaxPage || q.Tail < 0 || q.Tail > audit.MaxPage {
			t.Fatalf("accepted limit %d tail %d", q.Limit, q.Tail)
		}
	})
}
