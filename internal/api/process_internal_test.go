package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/sandbox"
)

func TestSplitUTF8(t *testing.T) {
	for _, tc := range []struct{ in, done, rest string }{
		{"abc", "abc", ""},
		{"é", "é", ""},
		{"a\xc3", "a", "\xc3"},
		{"a\xe2\x82", "a", "\xe2\x82"},
		{"a\xe2\x82\xac", "a\xe2\x82\xac", ""},
		{"\xf0\x9f\x98", "", "\xf0\x9f\x98"},
		{"\xff", "\xff", ""},   // never valid: not held back
		{"a\x80", "a\x80", ""}, // a stray continuation byte
	} {
		d, r := splitUTF8([]byte(tc.in))
		if string(d) != tc.done || string(r) != tc.rest {
			t.Errorf("splitUTF8(%q) = %q, %q; want %q, %q", tc.in, d, r, tc.done, tc.rest)
		}
	}
}

// chunkEvents feeds data to textChunks in the given cuts and returns the
// lines it emitted.
func chunkEvents(t testing.TB, data []byte, cuts []byte) []OutputLine {
	var lines []OutputLine
	tx := &textChunks{emit: func(l OutputLine) error { lines = append(lines, l); return nil }}
	off := int64(0)
	_ = tx.event(sandbox.OutputEvent{Stream: "stdout", Offset: 0})
	for _, c := range cuts {
		n := int(c) % (len(data) + 1)
		if n == 0 {
			continue
		}
		if err := tx.event(sandbox.OutputEvent{Stream: "stdout", Offset: off, Data: data[:n]}); err != nil {
			t.Fatal(err)
		}
		off += int64(n)
		data = data[n:]
	}
	if len(data) > 0 {
		_ = tx.event(sandbox.OutputEvent{Stream: "stdout", Offset: off, Data: data})
	}
	if err := tx.flushAll(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// reassemble checks the lines' offsets are contiguous and returns the bytes.
func reassemble(t testing.TB, lines []OutputLine) []byte {
	var out []byte
	for _, l := range lines {
		if l.Data == "" && l.DataB64 == "" {
			continue
		}
		if l.Offset == nil || *l.Offset != int64(len(out)) {
			t.Fatalf("line at offset %v, want %d", l.Offset, len(out))
		}
		if l.Data != "" {
			if !utf8.ValidString(l.Data) {
				t.Fatalf("data line is not UTF-8: %q", l.Data)
			}
			out = append(out, l.Data...)
			continue
		}
		b, err := base64.StdEncoding.DecodeString(l.DataB64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

func TestTextChunksKeepCharacters(t *testing.T) {
	data := []byte("héllo wörld €uro 😀!")
	// Every split point: characters are never split across two text lines,
	// and the JSON always round-trips the exact bytes.
	for i := 1; i < len(data); i++ {
		lines := chunkEvents(t, data, []byte{byte(i)})
		if got := reassemble(t, lines); !bytes.Equal(got, data) {
			t.Fatalf("cut at %d: %q", i, got)
		}
		for _, l := range lines {
			if l.DataB64 != "" {
				t.Fatalf("cut at %d fell back to base64: %+v", i, l)
			}
		}
	}
	// Binary stays exact (as base64).
	bin := []byte{0xff, 0xfe, 'a', 0x00, 0xc3}
	if got := reassemble(t, chunkEvents(t, bin, []byte{2})); !bytes.Equal(got, bin) {
		t.Fatalf("binary: %q", got)
	}
}

func FuzzTextChunks(f *testing.F) {
	f.Add([]byte("hello\n"), []byte{1, 2})
	f.Add([]byte("é€😀"), []byte{1, 1, 1, 1, 1})
	f.Add([]byte{0xf0, 0x9f, 0xff, 0xc3, 0xa9}, []byte{3})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		lines := chunkEvents(t, data, cuts)
		if got := reassemble(t, lines); !bytes.Equal(got, data) {
			t.Fatalf("reassembled %q, want %q", got, data)
		}
		for _, l := range lines {
			if _, err := json.Marshal(l); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestParseTerminalQuery(t *testing.T) {
	q, _ := url.ParseQuery("cmd=vi&cmd=/tmp/x&env=A=1&env=B=x=y&rows=40&cols=100&user=user&cwd=/tmp")
	tq, err := parseTerminalQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tq.req.Cmd, " ") != "vi /tmp/x" || tq.req.Env["B"] != "x=y" || tq.req.Size != (sandbox.PTYSize{Rows: 40, Cols: 100}) || tq.req.User != "user" {
		t.Fatalf("%+v", tq)
	}
	for _, bad := range []string{"rows=0&cols=5", "rows=x", "cols=99999&rows=1", "env=NOEQUALS", "env==v", "pid=5&cmd=sh", "from=start", "pid=5&from=bogus"} {
		q, _ := url.ParseQuery(bad)
		if tq, err := parseTerminalQuery(q); err == nil {
			t.Errorf("%q accepted: %+v", bad, tq)
		}
	}
}

func FuzzParseTerminalQuery(f *testing.F) {
	for _, s := range []string{"cmd=sh", "rows=1&cols=1", "pid=3&from=tail", "env=A=B", "rows=-1", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		tq, err := parseTerminalQuery(q)
		if err != nil {
			return
		}
		if tq.req.Size != (sandbox.PTYSize{}) && sandbox.ValidPTY(tq.req.Size) != nil {
			t.Fatalf("accepted size %+v", tq.req.Size)
		}
		if tq.pid != "" && len(tq.req.Cmd) > 0 {
			t.Fatal("pid with cmd")
		}
	})
}

func FuzzParseExecQuery(f *testing.F) {
	for _, s := range []string{"cmd=cat", "cmd=sh&cmd=-c&cmd=x&timeout_ms=5", "timeout_ms=-1&cmd=x", "env=K=V&cmd=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		req, err := parseExecQuery(q)
		if err != nil {
			return
		}
		if len(req.Cmd) == 0 || req.TimeoutMs < 0 {
			t.Fatalf("accepted %+v", req)
		}
	})
}

func TestWSToken(t *testing.T) {
	r := httptest.NewRequest("GET", "/x", nil)
	r.Header.Set("Sec-WebSocket-Protocol", "paddock.v1, bearer.pdk_abc")
	if got := wsToken(r); got != "pdk_abc" {
		t.Errorf("subprotocol token %q", got)
	}
	r = httptest.NewRequest("GET", "/x?token=pdk_q", nil)
	if got := wsToken(r); got != "pdk_q" {
		t.Errorf("query token %q", got)
	}
	r = httptest.NewRequest("GET", "/x", nil)
	r.Header.Set("Sec-WebSocket-Protocol", "bearer.")
	if got := wsToken(r); got != "" {
		t.Errorf("empty token %q", got)
	}
}

// The processes fragment documents exactly the routes processRoutes serves.
func TestProcessRoutesDocumented(t *testing.T) {
	s := New(Options{})
	var served []string
	for _, rt := range s.routes {
		if strings.Contains(rt.Pattern, "/processes") || strings.HasSuffix(rt.Pattern, "/pty") || strings.HasSuffix(rt.Pattern, "/exec/ws") {
			served = append(served, strings.ToLower(rt.Method)+" "+rt.Pattern)
		}
	}
	b, err := openapiFS.ReadFile("openapi/20-processes.json")
	if err != nil {
		t.Fatal(err)
	}
	var frag struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &frag); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for p, ops := range frag.Paths {
		for m := range ops {
			documented = append(documented, m+" "+p)
		}
	}
	sort.Strings(served)
	sort.Strings(documented)
	if strings.Join(served, "\n") != strings.Join(documented, "\n") {
		t.Fatalf("served:\n%s\ndocumented:\n%s", strings.Join(served, "\n"), strings.Join(documented, "\n"))
	}
	if _, err := buildOpenAPI(); err != nil {
		t.Fatalf("merged document: %v", err)
	}
}

func TestWSCredential(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/sandboxes/x/pty?cmd=sh&token=pdk_secret", nil)
	got := wsCredential(r)
	if got.Header.Get("Authorization") != "Bearer pdk_secret" {
		t.Fatalf("authorization %q", got.Header.Get("Authorization"))
	}
	if strings.Contains(got.URL.RawQuery, "pdk_secret") || strings.Contains(got.RequestURI, "pdk_secret") || got.URL.Query().Get("cmd") != "sh" {
		t.Fatalf("query %q uri %q", got.URL.RawQuery, got.RequestURI)
	}
	// A header wins; the query token is still dropped.
	r = httptest.NewRequest("GET", "/x?token=pdk_q", nil)
	r.Header.Set("Authorization", "Bearer pdk_h")
	if got := wsCredential(r); got.Header.Get("Authorization") != "Bearer pdk_h" || got.URL.RawQuery != "" {
		t.Fatalf("header case: %q %q", got.Header.Get("Authorization"), got.URL.RawQuery)
	}
	// Nothing to move: the same request.
	r = httptest.NewRequest("GET", "/x", nil)
	if wsCredential(r) != r {
		t.Fatal("cloned without need")
	}
}
