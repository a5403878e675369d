package e2b

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzReadEnvelope: whatever a client sends, the Connect frame parser
// neither panics nor reads past what it reports; every envelope it
// returns re-encodes to exactly the bytes it consumed.
func FuzzReadEnvelope(f *testing.F) {
	f.Add(frame(0, `{"path":"/a"}`))
	f.Add(append(frame(0, `{}`), frame(flagEndStream, `{"error":{"code":"x"}}`)...))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 'x'})
	f.Add(frame(flagCompressed, "\x1f\x8b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		off := 0
		for i := 0; i < 1000; i++ {
			env, err := readEnvelope(r, 1<<16)
			if err == io.EOF {
				if off != len(data) {
					t.Fatalf("EOF after %d of %d bytes", off, len(data))
				}
				return
			}
			if err != nil {
				if len(data)-off >= 5 && !errors.Is(err, errShortEnvelope) && !strings.Contains(err.Error(), "exceeds") {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			enc := appendEnvelope(nil, env.Flags, env.Data)
			if !bytes.Equal(enc, data[off:off+len(enc)]) {
				t.Fatalf("envelope %d does not re-encode to its bytes", i)
			}
			off += len(enc)
		}
	})
}

// FuzzDecodeMessage: request messages of every procedure decode or fail
// with invalid_argument, never panic.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"process":{"cmd":"/bin/bash","args":["-l","-c","echo hi"],"envs":{"A":"b"},"cwd":"/tmp"},"stdin":true,"tag":"t","pty":{"size":{"cols":80,"rows":24}}}`,
		`{"process":{"pid":"12"},"input":{"pty":"aGk="}}`,
		`{"process":{"tag":"x"},"signal":"SIGNAL_SIGKILL"}`,
		`{"path":"/a","depth":3}`, `{"path":"/w","recursive":true,"includeEntry":true}`, `{"source":"a","destination":"b"}`,
		`{"watcherId":"w_1"}`, `{}`, ``, `null`, `[]`, `{"process":null}`, `{"signal":1e99}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, v := range []any{&pbStartRequest{}, &pbSelectorRequest{}, &pbUpdateRequest{}, &pbSendInputRequest{},
			&pbSendSignalRequest{}, &pbPathRequest{}, &pbMoveRequest{}, &pbListDirRequest{}, &pbWatchRequest{},
			&pbWatcherRequest{}, &empty{}} {
			if err := decodeMessage(msg, v); err != nil {
				if code, _ := connectCode(err); code != ccInvalidArgument {
					t.Fatalf("%T: code %s for %v", v, code, err)
				}
			}
		}
		var in pbStartRequest
		if decodeMessage(msg, &in) == nil {
			_, _ = startRequest(&in, "user")
		}
		var sel pbSelectorRequest
		if decodeMessage(msg, &sel) == nil {
			if ref, err := selectorRef(sel.Process); err == nil && ref == "" {
				t.Fatal("an empty process reference")
			}
		}
	})
}

// FuzzParsers: the small parsers of headers, queries and tokens.
func FuzzParsers(f *testing.F) {
	for _, s := range []string{"", "Basic cm9vdDo=", "metadata=a%3Db", "state=running,paused&limit=3",
		cursor{created: 7, id: "sb-" + strings.Repeat("c", 26)}.String(), "~/x", "gzip;q=0", "123", "~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c, err := parseCursor(s); err == nil {
			if c2, err := parseCursor(c.String()); err != nil || c2 != c {
				t.Fatalf("cursor %q does not round-trip", s)
			}
		}
		_, _ = parseMetadataQuery(s)
		if u, err := basicUser(s); err == nil && u != "root" && u != "user" {
			t.Fatalf("basicUser(%q) = %q", s, u)
		}
		if p, err := resolvePath(s, "user"); err == nil && !strings.HasPrefix(p, "/") {
			t.Fatalf("resolvePath(%q) = %q, not absolute", s, p)
		}
		if d := parseKeepalive(s); d <= 0 || d > maxKeepalive {
			t.Fatalf("parseKeepalive(%q) = %v", s, d)
		}
		if d, err := parseTimeoutMs(s); err == nil && d < 0 {
			t.Fatalf("parseTimeoutMs(%q) = %v", s, d)
		}
		_ = acceptsGzip(s)
		if q, err := url.ParseQuery(s); err == nil {
			if lq, err := parseListQuery(q, true); err == nil && (lq.limit < 1 || lq.limit > maxPage) {
				t.Fatalf("limit %d", lq.limit)
			}
		}
		h := http.Header{}
		h.Set("X-Metadata-K", s)
		h.Set("X-Metadata-"+strings.Map(func(r rune) rune {
			if r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
				return 'x'
			}
			return r
		}, s), "v")
		if m, err := parseMetadataHeaders(h); err == nil {
			total := 0
			for k, v := range m {
				total += metaXattrPrefix + len(k) + len(v)
				if !printable(k) || !printable(v) || k != strings.ToLower(k) {
					t.Fatalf("metadata %q=%q accepted", k, v)
				}
			}
			if total > maxMetaPerFile {
				t.Fatalf("metadata of %d bytes accepted", total)
			}
		}
	})
}
