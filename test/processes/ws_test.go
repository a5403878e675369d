package processes

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// dial opens the terminal socket of sb with hdr, protocols and query.
func dial(t *testing.T, base, sb string, hdr http.Header, protos []string, query string) (*websocket.Conn, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := base + "/v1/sandboxes/" + sb + "/pty?cmd=sh&cmd=-c&cmd=echo+hi" + query
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: hdr, Subprotocols: protos})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp.StatusCode
	}
	return c, http.StatusSwitchingProtocols
}

// drain reads a terminal socket to its end and returns the output.
func drain(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			return out.String()
		}
		if typ == websocket.MessageBinary {
			out.Write(b)
		}
	}
}

func TestWebSocketAuth(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	bearer := http.Header{"Authorization": {"Bearer " + e.AdminKey}}
	// Positive control: the Authorization header works.
	c, st := dial(t, e.Server.URL, sb.ID, bearer, []string{api.WSProtocol}, "")
	if st != 101 {
		t.Fatalf("bearer header: %d", st)
	}
	if out := drain(t, c); !strings.Contains(out, "hi") {
		t.Fatalf("output %q", out)
	}
	// Browsers: the key as a subprotocol; the server selects paddock.v1,
	// never echoing the key.
	c, st = dial(t, e.Server.URL, sb.ID, nil, []string{api.WSProtocol, "bearer." + e.AdminKey}, "")
	if st != 101 {
		t.Fatalf("subprotocol key: %d", st)
	}
	if c.Subprotocol() != api.WSProtocol {
		t.Fatalf("selected subprotocol %q", c.Subprotocol())
	}
	drain(t, c)
	// ?token=
	c, st = dial(t, e.Server.URL, sb.ID, nil, nil, "&token="+url.QueryEscape(e.AdminKey))
	if st != 101 {
		t.Fatalf("token query: %d", st)
	}
	drain(t, c)
	// Refused: no key, a wrong key (each way).
	for name, tc := range map[string]struct {
		protos []string
		query  string
	}{
		"none":           {},
		"wrong protocol": {protos: []string{api.WSProtocol, "bearer.pdk_wrong"}},
		"wrong token":    {query: "&token=pdk_wrong"},
	} {
		if _, st := dial(t, e.Server.URL, sb.ID, nil, tc.protos, tc.query); st != 401 {
			t.Errorf("%s: status %d, want 401", name, st)
		}
	}
	// Another sandbox id: 404 before the upgrade.
	if _, st := dial(t, e.Server.URL, "sb-doesnotexist0000000000000000", bearer, nil, ""); st != 404 {
		t.Errorf("unknown sandbox: %d", st)
	}
}

// Cross-site WebSocket hijacking: a page on another origin must not open a
// terminal with its visitor's credentials.
func TestWebSocketOrigin(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	host := strings.TrimPrefix(e.Server.URL, "http://")
	hdr := func(origin string) http.Header {
		return http.Header{"Authorization": {"Bearer " + e.AdminKey}, "Origin": {origin}}
	}
	// Positive control: same origin is accepted.
	c, st := dial(t, e.Server.URL, sb.ID, hdr("http://"+host), nil, "")
	if st != 101 {
		t.Fatalf("same origin: %d", st)
	}
	drain(t, c)
	before := processCount(t, e, sb.ID)
	for _, o := range []string{"https://evil.example", "null", "http://" + host + ".evil.example"} {
		if _, st := dial(t, e.Server.URL, sb.ID, hdr(o), nil, ""); st != 403 {
			t.Errorf("origin %q: status %d, want 403", o, st)
		}
	}
	if after := processCount(t, e, sb.ID); after != before {
		t.Fatalf("a refused origin started a process (%d → %d)", before, after)
	}
	// The exec socket checks too.
	ctx := context.Background()
	_, resp, err := websocket.Dial(ctx, e.Server.URL+"/v1/sandboxes/"+sb.ID+"/exec/ws?cmd=true", &websocket.DialOptions{HTTPHeader: hdr("https://evil.example")})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("exec socket from a cross-site origin: %v", err)
	}
	// An allowed origin, once configured.
	srv := api.New(api.Options{Manager: e.Manager, Auth: auth.NewAdmin(e.AdminKey), Version: "test"})
	h, err := api.AllowWebSocketOrigins(srv.Handler(), []string{"app.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, st = dial(t, ts.URL, sb.ID, hdr("https://app.example.com"), nil, "")
	if st != 101 {
		t.Fatalf("configured origin: %d", st)
	}
	drain(t, c)
	if _, st := dial(t, ts.URL, sb.ID, hdr("https://evil.example"), nil, ""); st != 403 {
		t.Fatalf("unconfigured origin with patterns: %d", st)
	}
	if _, err := api.AllowWebSocketOrigins(srv.Handler(), []string{"[bad"}); err == nil {
		t.Fatal("bad pattern accepted")
	}
}

func processCount(t *testing.T, e *testenv.Env, id string) int {
	t.Helper()
	l, err := e.Client.Processes(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

// syncBuf is a bytes.Buffer safe for a writer and a poller.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Interactive exec streams stdin: the command answers a line before the
// input ends (a read-all-first implementation would deadlock here).
func TestExecInteractive(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	var out, errOut syncBuf
	type result struct {
		res client.ExecResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := e.Client.ExecInteractive(ctx, sb.ID, client.ExecRequest{
			Cmd: []string{"sh", "-c", `read a; echo "pong:$a"; read b; echo "err:$b" >&2; cat; exit 3`}}, pr, &out, &errOut)
		done <- result{res, err}
	}()
	io.WriteString(pw, "ping\n")
	for !strings.Contains(out.String(), "pong:ping") {
		select {
		case r := <-done:
			t.Fatalf("exec ended early: %+v %v", r.res, r.err)
		case <-ctx.Done():
			t.Fatalf("no answer before the end of input; stdout %q", out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	io.WriteString(pw, "second\nrest of input\n")
	pw.Close()
	r := <-done
	if r.err != nil || r.res.ExitCode != 3 {
		t.Fatalf("result %+v %v", r.res, r.err)
	}
	if out.String() != "pong:ping\nrest of input\n" || errOut.String() != "err:second\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errOut.String())
	}
	// Errors before the start are ordinary answers.
	_, err := e.Client.ExecInteractive(ctx, sb.ID, client.ExecRequest{Cmd: []string{"no-such-command"}}, strings.NewReader(""), &out, &errOut)
	if errCode(err) != "command_not_found" {
		t.Fatalf("missing command: %v", err)
	}
}
