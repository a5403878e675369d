package e2b

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

func frame(flags byte, msg string) []byte { return appendEnvelope(nil, flags, []byte(msg)) }

func TestReadEnvelope(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []byte
		max     int
		want    envelope
		wantErr string // "" ok; "EOF" io.EOF
	}{
		{"message", frame(0, `{"a":1}`), 100, envelope{0, []byte(`{"a":1}`)}, ""},
		{"end of stream", frame(flagEndStream, `{}`), 100, envelope{flagEndStream, []byte(`{}`)}, ""},
		{"empty message", frame(0, ""), 100, envelope{0, []byte{}}, ""},
		{"nothing", nil, 100, envelope{}, "EOF"},
		{"short header", []byte{0, 0, 0}, 100, envelope{}, "truncated"},
		{"short body", frame(0, "hello")[:7], 100, envelope{}, "truncated"},
		{"over the limit", frame(0, "hello"), 4, envelope{}, "exceeds the limit"},
		{"huge length, no body", []byte{0, 0xff, 0xff, 0xff, 0xff}, maxMessageBytes, envelope{}, "exceeds the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readEnvelope(bytes.NewReader(tc.in), tc.max)
			switch {
			case tc.wantErr == "EOF":
				if err != io.EOF {
					t.Fatalf("err = %v, want EOF", err)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Fatal(diff)
				}
			}
		})
	}
}

func TestConnectCodes(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   string
		status int
	}{
		{errs.Invalid("x"), ccInvalidArgument, 400},
		{errs.New(errs.CodeUnauthenticated, "x"), ccUnauthenticated, 401},
		{errs.New(errs.CodeForbidden, "x"), ccPermissionDenied, 403},
		{errs.NotFound("x"), ccNotFound, 404},
		{errs.New(errs.CodeConflict, "x"), ccFailedPrecondition, 400},
		{errs.New(errs.CodeTooLarge, "x"), ccResourceExhausted, 429},
		{errs.New(errs.CodeLimit, "x"), ccResourceExhausted, 429},
		{errs.New(errs.CodeUnsupported, "x"), ccUnimplemented, 501},
		{errs.New(errs.CodeSandboxNotActive, "x"), ccUnavailable, 503},
		{errs.New(errs.CodeTimeout, "x"), ccDeadlineExceeded, 504},
		{rpcErr(ccAlreadyExists, "x"), ccAlreadyExists, 409},
		{errors.New("/var/lib/paddock/secret: EIO"), ccInternal, 500},
	} {
		code, msg := connectCode(tc.err)
		if code != tc.code || connectStatus(code) != tc.status {
			t.Errorf("%v: code %s status %d, want %s %d", tc.err, code, connectStatus(code), tc.code, tc.status)
		}
		if strings.Contains(msg, "/var/lib") {
			t.Errorf("%v: the public message shows the cause: %q", tc.err, msg)
		}
	}
}

func TestNetworkFor(t *testing.T) {
	yes, no := true, false
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	host := "example.com"
	for _, tc := range []struct {
		name     string
		internet bool
		n        *e2bNetwork
		want     *sandbox.Network
		wantErr  string
	}{
		{"internet", true, nil, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"no internet", false, nil, &sandbox.Network{Mode: sandbox.NetNone}, ""},
		{"update {} with internet: full access again", true, &e2bNetwork{}, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"allowlist with deny all", true, &e2bNetwork{AllowOut: []string{"api.example.com", "1.2.3.4", "10.0.0.0/8"}, DenyOut: []string{allTraffic}},
			&sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"api.example.com"}, AllowCIDR: []string{"1.2.3.4", "10.0.0.0/8"}}, ""},
		{"allowlist without internet", false, &e2bNetwork{AllowOut: []string{"*.example.com"}},
			&sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"*.example.com"}}, ""},
		{"allowOut without a deny restricts nothing", true, &e2bNetwork{AllowOut: []string{"example.com"}}, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"IPv6 deny all", true, &e2bNetwork{DenyOut: []string{"::/0"}}, &sandbox.Network{Mode: sandbox.NetNone}, ""},
		{"allow everything", false, &e2bNetwork{AllowOut: []string{allTraffic}, DenyOut: []string{allTraffic}}, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"deny an IP and a CIDR: open with deny_cidr", true, &e2bNetwork{DenyOut: []string{"8.8.8.8", " 203.0.113.0/24"}},
			&sandbox.Network{Mode: sandbox.NetOpen, DenyCIDR: []string{"8.8.8.8", "203.0.113.0/24"}}, ""},
		{"allow wins over a narrower deny: its exceptions", true, &e2bNetwork{AllowOut: []string{"api.example.com", "203.0.113.7"}, DenyOut: []string{"203.0.113.0/24"}},
			&sandbox.Network{Mode: sandbox.NetOpen, Allow: []string{"api.example.com"}, AllowCIDR: []string{"203.0.113.7"}, DenyCIDR: []string{"203.0.113.0/24"}}, ""},
		{"narrower denies are within deny all", true, &e2bNetwork{AllowOut: []string{"1.2.3.4"}, DenyOut: []string{"8.8.8.8", allTraffic}},
			&sandbox.Network{Mode: sandbox.NetAllowlist, AllowCIDR: []string{"1.2.3.4"}}, ""},
		{"narrower denies without internet", false, &e2bNetwork{DenyOut: []string{"8.8.8.8"}}, &sandbox.Network{Mode: sandbox.NetNone}, ""},
		{"allow everything wins over a narrower deny", true, &e2bNetwork{AllowOut: []string{allTraffic}, DenyOut: []string{"8.8.8.8"}}, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"a domain in denyOut", true, &e2bNetwork{DenyOut: []string{"8.8.8.8", "example.com"}}, nil, "denyOut[1]"},
		{"rules without network access", false, &e2bNetwork{Rules: raw(`{"api.example.com":[{"transform":{"headers":{"X-A":"1"}}}]}`)}, nil, "rules grant none"},
		{"an empty rule list is no rule", false, &e2bNetwork{Rules: raw(`{"api.example.com":[]}`)}, &sandbox.Network{Mode: sandbox.NetNone}, ""},
		{"null rules are none", false, &e2bNetwork{Rules: raw(`null`)}, &sandbox.Network{Mode: sandbox.NetNone}, ""},
		{"egress proxy", false, &e2bNetwork{EgressProxy: raw(`{"address":"p:1080"}`)}, nil, "egressProxy"},
		{"public traffic is not egress (ports.go)", true, &e2bNetwork{AllowPublicTraffic: &yes}, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"token-guarded traffic is what Paddock does", true, &e2bNetwork{AllowPublicTraffic: &no}, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"a Host mask is not egress (ports.go)", true, &e2bNetwork{MaskRequestHost: &host}, &sandbox.Network{Mode: sandbox.NetOpen}, ""},
		{"https ports", true, &e2bNetwork{HTTPSPorts: []int{8443}}, nil, "httpsPorts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := networkFor(tc.internet, tc.n)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errs.Public(err), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatal(diff)
			}
			// Whatever comes out is a policy Paddock accepts.
			if _, err := sandbox.NormalizeNetwork(got); err != nil {
				t.Fatalf("not a valid policy: %v", err)
			}
		})
	}
}

// keysOf is what parseMetadataHeaders makes of h.
func keysOf(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[strings.ToLower(strings.TrimPrefix(k, "X-Metadata-"))] = v[0]
	}
	return out
}

// manyKeys is n metadata headers.
func manyKeys(n int) http.Header {
	h := http.Header{}
	for i := 0; i < n; i++ {
		h.Set(fmt.Sprintf("X-Metadata-K%d", i), "v")
	}
	return h
}

func TestParseMetadataHeaders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		h       http.Header
		want    map[string]string
		wantErr string
	}{
		{"none", http.Header{"Content-Type": {"x"}}, nil, ""},
		{"lower-cased keys, first value", http.Header{"X-Metadata-Owner": {"alice", "bob"}, "X-Metadata-Purpose": {"test"}},
			map[string]string{"owner": "alice", "purpose": "test"}, ""},
		{"empty value", http.Header{"X-Metadata-A": {""}}, map[string]string{"a": ""}, ""},
		{"empty key", http.Header{"X-Metadata-": {"v"}}, nil, "1..200"},
		{"non-ASCII value", http.Header{"X-Metadata-A": {"caf\u00e9"}}, nil, "printable"},
		{"control character", http.Header{"X-Metadata-A": {"a\tb"}}, nil, "printable"},
		{"longest key", http.Header{"X-Metadata-" + strings.Repeat("k", 200): {"v"}}, map[string]string{strings.Repeat("k", 200): "v"}, ""},
		{"long key", http.Header{"X-Metadata-" + strings.Repeat("k", 201): {"v"}}, nil, "1..200"},
		{"too many keys", manyKeys(65), nil, "at most 64 metadata keys"},
		{"most keys", manyKeys(64), keysOf(manyKeys(64)), ""},
		{"too much in all", http.Header{"X-Metadata-A": {strings.Repeat("v", 3000)}, "X-Metadata-B": {strings.Repeat("v", 1100)}}, nil, "at most 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMetadataHeaders(tc.h)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errs.Public(err), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}

func TestParseCursor(t *testing.T) {
	c := cursor{created: 1234567890123, id: "sb-" + strings.Repeat("a", 26)}
	got, err := parseCursor(c.String())
	if err != nil || got != c {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, bad := range []string{"", "!!!", "bm90LWEtY3Vyc29y", cursor{created: 1, id: "../etc"}.String(), strings.Repeat("A", 300)} {
		if _, err := parseCursor(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseListQuery(t *testing.T) {
	// What the SDK sends for {query: {metadata: {"a b": "c&d", k: "v"}}}:
	// the pairs URI-encoded, joined as a query, sent as one parameter.
	inner := url.Values{url.PathEscape("a b"): {url.PathEscape("c&d")}, "k": {"v"}}.Encode()
	for _, tc := range []struct {
		name    string
		q       string
		paged   bool
		check   func(t *testing.T, lq listQuery)
		wantErr string
	}{
		{"defaults", "", true, func(t *testing.T, lq listQuery) {
			if !lq.desc || lq.limit != defaultPage || lq.metadata != nil || lq.cursor != nil {
				t.Fatalf("%+v", lq)
			}
		}, ""},
		{"metadata", "metadata=" + url.QueryEscape(inner), true, func(t *testing.T, lq listQuery) {
			if diff := cmp.Diff(map[string]string{"a b": "c&d", "k": "v"}, lq.metadata); diff != "" {
				t.Fatal(diff)
			}
		}, ""},
		{"state list", "state=running,paused&limit=5&order=asc", true, func(t *testing.T, lq listQuery) {
			if !lq.states["running"] || !lq.states["paused"] || lq.limit != 5 || lq.desc {
				t.Fatalf("%+v", lq)
			}
		}, ""},
		{"cursor", "nextToken=" + cursor{created: 5, id: "sb-" + strings.Repeat("b", 26)}.String(), true, func(t *testing.T, lq listQuery) {
			if lq.cursor == nil || lq.cursor.created != 5 {
				t.Fatalf("%+v", lq)
			}
		}, ""},
		{"bad state", "state=dead", true, nil, "state"},
		{"bad limit", "limit=0", true, nil, "limit"},
		{"limit too big", "limit=1000", true, nil, "limit"},
		{"unknown", "color=red", true, nil, "not supported"},
		{"v1 takes no limit", "limit=5", false, nil, "not supported"},
		{"repeated", "limit=1&limit=2", true, nil, "2 times"},
		{"bad time", "startedAfter=yesterday", true, nil, "RFC 3339"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			lq, err := parseListQuery(q, tc.paged)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errs.Public(err), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, lq)
		})
	}
}

func TestUsersAndPaths(t *testing.T) {
	for _, tc := range []struct {
		header, user, wantErr string
	}{
		{"", "user", ""},
		{"Basic dXNlcjo=", "user", ""}, // "user:"
		{"Basic cm9vdDo=", "root", ""}, // "root:"
		{"Basic Ym9iOg==", "", "unknown user"},
		{"Bearer x", "", "Basic"},
		{"Basic !!!", "", "Basic"},
	} {
		got, err := basicUser(tc.header)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(errs.Public(err), tc.wantErr) {
				t.Errorf("%q: err = %v, want %q", tc.header, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.user {
			t.Errorf("%q: %q, %v; want %q", tc.header, got, err, tc.user)
		}
	}
	for _, tc := range []struct{ in, user, want string }{
		{"/abs/x", "user", "/abs/x"},
		{"rel/x", "user", "/home/user/rel/x"},
		{"rel", "root", "/root/rel"},
		{"~", "user", "/home/user"},
		{"~/x", "root", "/root/x"},
	} {
		if got, err := resolvePath(tc.in, tc.user); err != nil || got != tc.want {
			t.Errorf("resolvePath(%q, %s) = %q, %v; want %q", tc.in, tc.user, got, err, tc.want)
		}
	}
	if _, err := resolvePath("", "user"); err == nil {
		t.Error("an empty path is accepted")
	}
}

func TestEndEvent(t *testing.T) {
	zero, three := 0, 3
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		info sandbox.ProcessInfo
		want pbEndEvent
	}{
		{sandbox.ProcessInfo{ExitCode: &zero}, pbEndEvent{ExitCode: 0, Exited: true, Status: "exit status 0"}},
		{sandbox.ProcessInfo{ExitCode: &three}, pbEndEvent{ExitCode: 3, Exited: true, Status: "exit status 3", Error: str("exit status 3")}},
		{sandbox.ProcessInfo{Signal: "SIGKILL"}, pbEndEvent{ExitCode: -1, Status: "signal: killed", Error: str("signal: killed")}},
		{sandbox.ProcessInfo{Signal: "SIGTERM"}, pbEndEvent{ExitCode: -1, Status: "signal: terminated", Error: str("signal: terminated")}},
		{sandbox.ProcessInfo{Signal: "SIGKILL", OOMKilled: true}, pbEndEvent{ExitCode: -1, Status: "signal: killed (out of memory)",
			Error: str("signal: killed (out of memory)")}},
	} {
		if diff := cmp.Diff(&tc.want, endEvent(tc.info)); diff != "" {
			t.Errorf("%+v: %s", tc.info, diff)
		}
	}
}

func TestProtoJSON(t *testing.T) {
	var in pbSendInputRequest
	for _, tc := range []struct {
		msg  string
		want string
	}{
		{`{"process":{"pid":7},"input":{"stdin":"aGk="}}`, "hi"},      // std, padded
		{`{"process":{"pid":"7"},"input":{"stdin":"aGk"}}`, "hi"},     // unpadded; pid as a string
		{`{"process":{"tag":"x"},"input":{"pty":"_-8"}}`, "\xff\xef"}, // URL-safe
	} {
		in = pbSendInputRequest{}
		if err := decodeMessage([]byte(tc.msg), &in); err != nil {
			t.Fatalf("%s: %v", tc.msg, err)
		}
		data := in.Input.Stdin
		if data == nil {
			data = in.Input.PTY
		}
		if string(*data) != tc.want {
			t.Errorf("%s: %q", tc.msg, *data)
		}
	}
	for _, tc := range []struct{ msg, wantErr string }{
		{`{"process":{"pid":7},"inptu":{}}`, `unknown field "inptu"`},
		{`{"process":{"pid":-1}}`, "uint32"},
		{`{"process":{"pid":4294967296}}`, "uint32"},
		{`{"input":{"stdin":"%%%"}}`, "base64"},
		{`{"process":{}} {}`, "trailing"},
		{`{"process":`, "truncated"},
		{`{"process":}`, "syntax"},
	} {
		in = pbSendInputRequest{}
		err := decodeMessage([]byte(tc.msg), &in)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v, want %q", tc.msg, err, tc.wantErr)
		}
	}
	var sig pbSendSignalRequest
	for msg, want := range map[string]pbSignal{`{"signal":"SIGNAL_SIGKILL"}`: sigKill, `{"signal":15}`: sigTerm, `{}`: sigUnspecified} {
		sig = pbSendSignalRequest{}
		if err := decodeMessage([]byte(msg), &sig); err != nil || sig.Signal != want {
			t.Errorf("%s: %v %v", msg, sig.Signal, err)
		}
	}
	if err := decodeMessage([]byte(`{"signal":"SIGHUP"}`), &sig); err == nil {
		t.Error("an unknown enum name is accepted")
	}
	// Responses: int64 as a string, enums by name, timestamps in UTC.
	e := pbEntryInfo{Name: "a", Type: ftFile, Size: 1 << 40, ModifiedTime: pbTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600)))}
	b, _ := json.Marshal(e)
	for _, want := range []string{`"size":"1099511627776"`, `"type":"FILE_TYPE_FILE"`, `"modifiedTime":"2026-01-02T02:04:05.000006Z"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	for ns, want := range map[int]string{0: "05Z", 5e8: "05.500Z", 123456789: "05.123456789Z"} {
		if got := pbTime(time.Date(2026, 1, 2, 3, 4, 5, ns, time.UTC)); !strings.HasSuffix(got, want) {
			t.Errorf("pbTime(%d ns) = %s", ns, got)
		}
	}
}

func TestHeaderParsers(t *testing.T) {
	for h, want := range map[string]bool{"gzip": true, "br, gzip;q=0.5": true, "GZIP": true, "gzip;q=0": false, "deflate": false, "": false} {
		if acceptsGzip(h) != want {
			t.Errorf("acceptsGzip(%q) != %v", h, want)
		}
	}
	for h, want := range map[string]time.Duration{"": defaultKeepalive, "30": 30 * time.Second, "0": defaultKeepalive,
		"x": defaultKeepalive, "9999999": maxKeepalive} {
		if got := parseKeepalive(h); got != want {
			t.Errorf("parseKeepalive(%q) = %v, want %v", h, got, want)
		}
	}
	for h, want := range map[string]time.Duration{"": 0, "1500": 1500 * time.Millisecond, "9999999999": 9999999999 * time.Millisecond} {
		if got, err := parseTimeoutMs(h); err != nil || got != want {
			t.Errorf("parseTimeoutMs(%q) = %v, %v", h, got, err)
		}
	}
	for _, h := range []string{"-1", "1e3", "12345678901"} {
		if _, err := parseTimeoutMs(h); err == nil {
			t.Errorf("parseTimeoutMs(%q) accepted", h)
		}
	}
}

func TestStreamFraming(t *testing.T) {
	// A request stream must be exactly one uncompressed message.
	mk := func(body []byte, ct string) *http.Request {
		r, _ := http.NewRequest("POST", "/x", bytes.NewReader(body))
		r.Header.Set("Content-Type", ct)
		return r
	}
	var v pbPathRequest
	if err := readStreamRequest(mk(frame(0, `{"path":"/a"}`), ctStreamJSON), &v); err != nil || v.Path != "/a" {
		t.Fatalf("%v %+v", err, v)
	}
	for name, r := range map[string]*http.Request{
		"unary content type": mk(frame(0, `{}`), ctUnaryJSON),
		"two messages":       mk(append(frame(0, `{}`), frame(0, `{}`)...), ctStreamJSON),
		"compressed":         mk(frame(flagCompressed, `{}`), ctStreamJSON),
		"end flag":           mk(frame(flagEndStream, `{}`), ctStreamJSON),
		"no message":         mk(nil, ctStreamJSON),
		"truncated":          mk(frame(0, `{"path":"/a"}`)[:8], ctStreamJSON),
	} {
		if err := readStreamRequest(r, &v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The answer: messages, then the end-of-stream envelope.
	rr := &recorder{h: http.Header{}}
	st := newStream(rr)
	_ = st.send(map[string]int{"n": 1})
	st.end(errs.NotFound("gone"))
	if rr.h.Get("Content-Type") != ctStreamJSON || rr.status != 200 {
		t.Fatalf("%v %d", rr.h, rr.status)
	}
	b := rr.buf.Bytes()
	e1, _ := readEnvelope(bytes.NewReader(b), 100)
	if e1.Flags != 0 || string(e1.Data) != `{"n":1}` {
		t.Fatalf("first: %+v", e1)
	}
	e2, _ := readEnvelope(bytes.NewReader(b[5+len(e1.Data):]), 100)
	if e2.Flags != flagEndStream || string(e2.Data) != `{"error":{"code":"not_found","message":"gone"}}` {
		t.Fatalf("end: %+v %s", e2, e2.Data)
	}
	if err := st.send(1); err == nil {
		t.Error("a message after the end was sent")
	}
	if n := binary.BigEndian.Uint32(b[1:5]); int(n) != len(e1.Data) {
		t.Fatal("length prefix")
	}
}

type recorder struct {
	h      http.Header
	buf    bytes.Buffer
	status int
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.buf.Write(b)
}
func (r *recorder) WriteHeader(s int) { r.status = s }
func (r *recorder) Flush()            {}

func TestCreateInternet(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name    string
		def     bool
		b       createBody
		want    bool
		wantErr string
	}{
		{"not said: E2B's default", true, createBody{}, true, ""},
		{"not said: the operator closed it", false, createBody{}, false, ""},
		{"said no", true, createBody{AllowInternetAccess: &no}, false, ""},
		{"said yes over a closed default", false, createBody{AllowInternetAccess: &yes}, true, ""},
		{"said in network", true, createBody{Network: &e2bNetwork{AllowInternetAccess: &no}}, false, ""},
		{"contradiction", true, createBody{AllowInternetAccess: &yes, Network: &e2bNetwork{AllowInternetAccess: &no}}, false, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{o: Options{DefaultInternet: tc.def}}
			got, err := s.createInternet(&tc.b)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errs.Public(err), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// The internet choice rides on the sandbox as a label of Paddock's, which
// E2B's metadata never shows and a user may not set.
func TestInternetLabel(t *testing.T) {
	labels, err := withInternetLabel(map[string]string{"suite": "x"}, true)
	if err != nil || labels[internetLabel] != "true" || labels["suite"] != "x" {
		t.Fatalf("labels = %v, %v", labels, err)
	}
	if got := userMetadata(labels); len(got) != 1 || got["suite"] != "x" {
		t.Fatalf("user metadata = %v", got)
	}
	if _, err := withInternetLabel(map[string]string{internetLabel: "false"}, true); err == nil {
		t.Fatal("a user set Paddock's own label")
	}
	sb := sandbox.Sandbox{Spec: sandbox.Spec{Labels: labels, Network: &sandbox.Network{Mode: sandbox.NetNone}}}
	if !baseInternet(sb) {
		t.Fatal("the label says internet")
	}
	sb.Spec.Labels = nil // made through Paddock's own API
	if baseInternet(sb) {
		t.Fatal("a none sandbox has no internet")
	}
}

func TestLinkTarget(t *testing.T) {
	for _, c := range [][3]string{
		{"/home/user/l", "t.txt", "/home/user/t.txt"},
		{"/home/user/l", "../x/./y", "/home/x/y"},
		{"/home/user/l", "/etc//hosts", "/etc/hosts"},
		{"/l", "../../t", "/t"},
		{"/home/user/l", "", ""},
	} {
		if got := linkTarget(c[0], c[1]); got != c[2] {
			t.Errorf("linkTarget(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestFileSignatureIsTheSDKs: the signature of a file URL is the one the
// e2b SDK's getSignature computes (this value came from SDK 2.51.0).
func TestFileSignatureIsTheSDKs(t *testing.T) {
	if got, want := fileSignature("dir/a b.txt", "read", "", "pdt_example", ""), "v1_Dq+1SSrcYxVT9LY9K2mjQ0OtFtu9h4z/Px3XLLkCIC0"; got != want {
		t.Fatalf("fileSignature = %s, want the SDK's %s", got, want)
	}
}

// TestIssuedTokensBounded: the adapter remembers a bounded number of
// tokens per sandbox, the newest, and none of a dropped sandbox.
func TestIssuedTokensBounded(t *testing.T) {
	var i issued
	for n := 0; n < 3*signTokensPerSandbox; n++ {
		i.add("a", strconv.Itoa(n))
	}
	got := i.tokens("a")
	if len(got) != signTokensPerSandbox || got[len(got)-1] != strconv.Itoa(3*signTokensPerSandbox-1) {
		t.Fatalf("kept %v", got)
	}
	i.drop("a")
	if len(i.tokens("a")) != 0 {
		t.Fatal("a dropped sandbox's tokens are kept")
	}
}

// TestPortLabels: the port options become Paddock's labels, validated;
// neither is taken from metadata, and updates refuse them.
func TestPortLabels(t *testing.T) {
	yes := true
	mask := "${PORT}-app.example.com"
	got, err := portLabels(map[string]string{"app": "x"}, &e2bNetwork{AllowPublicTraffic: &yes, MaskRequestHost: &mask})
	if err != nil || got[publicTrafficLabel] != "true" || got[maskHostLabel] != mask || got["app"] != "x" {
		t.Fatalf("portLabels = %v, %v", got, err)
	}
	if meta := hidePortLabels(got); len(meta) != 1 {
		t.Fatalf("hidden: %v", meta)
	}
	for _, bad := range []string{"", "a b", "a\r\nX: y", strings.Repeat("a", 254), "${HOST}"} {
		if _, err := portLabels(nil, &e2bNetwork{MaskRequestHost: &bad}); err == nil {
			t.Errorf("mask %q accepted", bad)
		}
	}
	if _, err := portLabels(map[string]string{publicTrafficLabel: "true"}, nil); err == nil {
		t.Error("the label taken from metadata")
	}
	if err := portUpdate(&e2bNetwork{AllowPublicTraffic: &yes}); err == nil {
		t.Error("an update set allowPublicTraffic")
	}
}

// TestInfoNetworkRoundTrip: getInfo reports E2B's lists back from the
// policy they were mapped onto (deny lists included).
func TestInfoNetworkRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         *e2bNetwork
		wantAllow []string
		wantDeny  []string
	}{
		{"deny with exceptions", &e2bNetwork{AllowOut: []string{"api.example.com", "203.0.113.7"}, DenyOut: []string{"203.0.113.0/24", "8.8.8.8"}},
			[]string{"api.example.com", "203.0.113.7"}, []string{"203.0.113.0/24", "8.8.8.8"}},
		{"allowlist", &e2bNetwork{AllowOut: []string{"api.example.com"}, DenyOut: []string{allTraffic}},
			[]string{"api.example.com"}, []string{allTraffic}},
		{"open", &e2bNetwork{}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := networkFor(true, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if p, err = sandbox.NormalizeNetwork(p); err != nil {
				t.Fatal(err)
			}
			got := info(sandbox.Sandbox{Spec: sandbox.Spec{Network: p}}, true)
			var allow, deny []string
			if got.Network != nil {
				allow, deny = got.Network.AllowOut, got.Network.DenyOut
			}
			if diff := cmp.Diff(tc.wantAllow, allow); diff != "" {
				t.Error("allowOut", diff)
			}
			if diff := cmp.Diff(tc.wantDeny, deny); diff != "" {
				t.Error("denyOut", diff)
			}
		})
	}
}
