package api

import (
	"bytes"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/wire"
)

// FuzzDecodeCode: the body of POST .../code goes through decodeCode and
// its query through wantsCodeStream. Neither panics; a refusal is
// invalid_argument or too_large only; what is accepted is within bounds.
func FuzzDecodeCode(f *testing.F) {
	for _, s := range []struct{ body, query string }{
		{`{"code":"1+1"}`, ""}, {``, "stream=false"}, {`{"code":"x","context_id":"c","language":"py"}`, "stream"},
		{`{"code":"x","env":{"A":"b"},"timeout_ms":5,"user":"user"}`, "stream=maybe"}, {`{"code":1}`, "stream=0&stream=1"},
		{`{"code":"\ud800"}`, "%zz"}, {`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`, ""}, {`{"code":"a"} {}`, ""}, {`{"bogus":1}`, ""},
	} {
		f.Add([]byte(s.body), s.query)
	}
	f.Fuzz(func(t *testing.T, body []byte, query string) {
		r := httptest.NewRequest("POST", "/v1/sandboxes/sb-x/code", bytes.NewReader(body))
		if _, err := url.ParseQuery(query); err == nil {
			r.URL.RawQuery = query
		}
		if _, err := wantsCodeStream(r); err != nil && errs.CodeOf(err) != errs.CodeInvalid {
			t.Fatalf("stream flag refused with %s: %v", errs.CodeOf(err), err)
		}
		var v wire.CodeExecuteRequest
		if err := decodeCode(r, &v); err != nil {
			if c := errs.CodeOf(err); c != errs.CodeInvalid && c != errs.CodeTooLarge {
				t.Fatalf("decodeCode refused with %s: %v", c, err)
			}
			return
		}
		if depth(body) > maxJSONDepth || len(body) > maxCodeBody {
			t.Fatalf("accepted a body of depth %d and %d bytes", depth(body), len(body))
		}
	})
}
