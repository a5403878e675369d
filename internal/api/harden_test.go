package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		writeError(w, r, errs.Invalid("could not read the request body"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"read": n})
})

// serveHardened runs h behind the hardening on a real listener, as
// paddock serve does, and returns its address.
func serveHardened(t *testing.T, ho HardenOptions, hl HTTPLimits, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ho.ListenAddr = ln.Addr().String()
	srv := NewHTTPServer(Harden(ho)(h), hl, nil)
	go func() { _ = srv.Serve(LimitListener(ln, hl, true, nil)) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func get(t *testing.T, addr, path string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestHostCheck(t *testing.T) {
	cases := []struct {
		listen  string
		allowed []string
		host    string
		ok      bool
	}{
		{"127.0.0.1:7070", nil, "127.0.0.1:7070", true},
		{"127.0.0.1:7070", nil, "localhost:7070", true},
		{"127.0.0.1:7070", nil, "LOCALHOST.", true},
		{"127.0.0.1:7070", nil, "[::1]:7070", true},
		{"127.0.0.1:7070", nil, "127.0.0.2", true}, // loopback
		// DNS rebinding: the attacker's name, resolving to us.
		{"127.0.0.1:7070", nil, "evil.example", false},
		{"127.0.0.1:7070", nil, "evil.example:7070", false},
		{"127.0.0.1:7070", nil, "localhost.evil.example", false},
		{"127.0.0.1:7070", nil, "", false},
		{"127.0.0.1:7070", nil, "10.0.0.5:7070", false},
		{"10.0.0.5:7070", nil, "10.0.0.5:7070", true},
		{"10.0.0.5:7070", nil, "10.0.0.6:7070", false},
		{"0.0.0.0:7070", nil, "10.0.0.6:7070", true}, // any IP literal: rebinding needs a name
		{"0.0.0.0:7070", nil, "[fd00::1]:7070", true},
		{"0.0.0.0:7070", nil, "paddock.corp", false},
		{"0.0.0.0:7070", []string{"paddock.corp"}, "Paddock.Corp:7070", true},
		{"0.0.0.0:7070", []string{"*.corp"}, "a.paddock.corp", true},
		{"0.0.0.0:7070", []string{"*.corp"}, "corp", false},
		{"0.0.0.0:7070", []string{"*.corp"}, "evilcorp", false},
		{"paddock.corp:7070", nil, "paddock.corp", true},
		{"127.0.0.1:7070", []string{"*"}, "anything.example", true},
	}
	for _, c := range cases {
		hc := newHostCheck(c.allowed, c.listen)
		if got := hc.allowed(c.host); got != c.ok {
			t.Errorf("listen %s allowed %v: Host %q allowed = %v, want %v", c.listen, c.allowed, c.host, got, c.ok)
		}
	}
}

// TestHostHeaderOverHTTP: a request naming another host is refused; the
// same request with the server's own address works (positive control).
func TestHostHeaderOverHTTP(t *testing.T) {
	addr := serveHardened(t, HardenOptions{}, HTTPLimits{}, okHandler)
	if r := get(t, addr, "/x", "Host", "evil.example"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("Host evil.example: %d", r.StatusCode)
	}
	if r := get(t, addr, "/x"); r.StatusCode != http.StatusOK {
		t.Fatalf("real host: %d", r.StatusCode)
	}
}

func TestOriginCheck(t *testing.T) {
	h := Harden(HardenOptions{AllowedOrigins: []string{"https://app.example.com"}})(okHandler)
	do := func(method, origin string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://127.0.0.1:7070/v1/sandboxes", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	noCORS := func(t *testing.T, w *httptest.ResponseRecorder) {
		t.Helper()
		for k := range w.Header() {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Fatalf("unexpected CORS header %s: %v", k, w.Header())
			}
		}
	}
	cases := []struct {
		name, method, origin string
		hdr                  []string
		status               int
	}{
		{"no origin (CLI, SDK)", "GET", "", nil, 200},
		{"same origin", "POST", "http://127.0.0.1:7070", nil, 200},
		{"same origin, default port spelled", "GET", "http://127.0.0.1:7070/", nil, 200},
		{"cross-site", "POST", "https://evil.example", nil, 403},
		{"cross-site, same host other port", "GET", "http://127.0.0.1:8080", nil, 403},
		{"opaque origin", "GET", "null", nil, 403},
		{"cross-site preflight", "OPTIONS", "https://evil.example", []string{"Access-Control-Request-Method", "POST"}, 403},
		{"cross-site WebSocket", "GET", "https://evil.example", []string{"Upgrade", "websocket", "Connection", "Upgrade"}, 403},
		{"fetch metadata without origin", "GET", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"fetch metadata same-origin", "GET", "", []string{"Sec-Fetch-Site", "same-origin"}, 200},
		{"following a link from elsewhere", "GET", "", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate"}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := do(c.method, c.origin, c.hdr...)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			noCORS(t, w)
		})
	}
	// An allowed origin gets CORS answers, preflight included.
	w := do("OPTIONS", "https://app.example.com", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("allowed preflight: %d %v", w.Code, w.Header())
	}
	if w.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Fatal("credentials mode must stay off")
	}
	w = do("GET", "https://APP.example.com:443")
	if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Fatalf("allowed origin request: %d %v", w.Code, w.Header())
	}
}

func TestBodyLimits(t *testing.T) {
	addr := serveHardened(t, HardenOptions{MaxBodyBytes: 1024}, HTTPLimits{}, okHandler)
	post := func(body io.Reader, n int64) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/x", body)
		req.ContentLength = n
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := post(strings.NewReader(strings.Repeat("a", 1024)), 1024); st != 200 || !strings.Contains(body, `"read":1024`) {
		t.Fatalf("at the limit: %d %s", st, body)
	}
	if st, body := post(strings.NewReader(strings.Repeat("a", 2048)), 2048); st != http.StatusRequestEntityTooLarge || !strings.Contains(body, "too_large") {
		t.Fatalf("declared oversize: %d %s", st, body)
	}
	// Chunked (no length): cut at the limit while reading.
	if st, _ := post(io.MultiReader(strings.NewReader(strings.Repeat("a", 4096))), -1); st == 200 {
		t.Fatal("an oversized chunked body was read whole")
	}
	// Uploads into a sandbox bound their bodies themselves (upload cap,
	// disk quota): the general limit does not cut them off.
	for _, u := range []struct{ method, path string }{
		{http.MethodPut, "/v1/sandboxes/sb-x/files"},
		{http.MethodPost, "/v1/sandboxes/sb-x/files/archive"},
	} {
		req, _ := http.NewRequest(u.method, "http://"+addr+u.path, strings.NewReader(strings.Repeat("a", 4096)))
		req.ContentLength = 4096
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"read":4096`) {
			t.Fatalf("%s %s over the general limit: %d %s", u.method, u.path, resp.StatusCode, b)
		}
	}
}

// TestHeaderTooLarge: Go answers 431 beyond MaxHeaderBytes.
func TestHeaderTooLarge(t *testing.T) {
	addr := serveHardened(t, HardenOptions{}, HTTPLimits{}, okHandler)
	if r := get(t, addr, "/x", "X-Big", strings.Repeat("a", 1<<10)); r.StatusCode != 200 {
		t.Fatalf("1 KiB header: %d", r.StatusCode)
	}
	if r := get(t, addr, "/x", "X-Big", strings.Repeat("a", 100<<10)); r.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("100 KiB header: %d, want 431", r.StatusCode)
	}
	if r := get(t, addr, "/x"); r.StatusCode != 200 {
		t.Fatalf("after: %d", r.StatusCode)
	}
}

func TestDeepJSON(t *testing.T) {
	h := Harden(HardenOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := decode(r, &v); err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, 200, v)
	}))
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"a":[[[1]]]}`, 200},
		{`{"a":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, 400},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "http://127.0.0.1/x", strings.NewReader(c.body)))
		if w.Code != c.status {
			t.Fatalf("body of %d bytes: %d, want %d", len(c.body), w.Code, c.status)
		}
	}
}

// TestPanicAndErrorsLeakNothing: a 500 carries neither a stack trace nor
// host paths, whether it comes from a panic or from a wrapped error.
func TestPanicAndErrorsLeakNothing(t *testing.T) {
	s := New(Options{})
	s.public("GET /test/panic", func(w http.ResponseWriter, r *http.Request) {
		panic(fmt.Sprintf("open /var/lib/paddock/layers/sb-x/upper: %v", errors.New("permission denied")))
	})
	s.public("GET /test/wrapped", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errs.Wrap(errs.CodeInternal, errors.New("mount /var/lib/paddock/layers/x: EINVAL"), "the sandbox could not be started"))
	})
	s.public("GET /test/plain", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, fmt.Errorf("read /etc/paddock/secret.key: %w", errors.New("EIO")))
	})
	h := s.Handler()
	for _, path := range []string{"/test/panic", "/test/wrapped", "/test/plain"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		body := w.Body.String()
		if w.Code != 500 {
			t.Fatalf("%s: %d", path, w.Code)
		}
		var eb ErrorBody
		if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil || eb.Error.Code != "internal" {
			t.Fatalf("%s: not the error shape: %s", path, body)
		}
		for _, leak := range []string{"/var/lib", "/etc/", "goroutine", ".go:", "panic", "EINVAL", "EIO", "permission denied"} {
			if strings.Contains(body, leak) {
				t.Fatalf("%s: answer leaks %q: %s", path, leak, body)
			}
		}
	}
	// Positive control: the server still answers after the panic.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/healthz", nil))
	if w.Code != 200 {
		t.Fatalf("healthz after the panic: %d", w.Code)
	}
}

// watchClose reports when the server closes c (a read ends in EOF or an
// error).
func watchClose(c net.Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, c)
		done <- err
	}()
	return done
}

// TestSlowloris: clients sending their headers one byte a second are cut
// off at the header timeout, while ordinary requests keep being answered.
// Positive control: the same client against a server without the timeout
// is still connected when the hardened server has cut it.
func TestSlowloris(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a few seconds")
	}
	addr := serveHardened(t, HardenOptions{}, HTTPLimits{ReadHeaderTimeout: 2 * time.Second}, okHandler)
	plainLn, _ := net.Listen("tcp", "127.0.0.1:0")
	plain := &http.Server{Handler: okHandler} // no ReadHeaderTimeout
	go func() { _ = plain.Serve(plainLn) }()
	defer plain.Close()

	const attackers = 20
	header := "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + strings.Repeat("s", 40) + "\r\n\r\n"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attack := func(to string) (net.Conn, <-chan error) {
		c, err := net.Dial("tcp", to)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for i := 0; i < len(header); i++ {
				if _, err := c.Write([]byte{header[i]}); err != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
		}()
		return c, watchClose(c)
	}
	var cut []<-chan error
	for range attackers {
		c, done := attack(addr)
		defer c.Close()
		cut = append(cut, done)
	}
	control, controlDone := attack(plainLn.Addr().String())
	defer control.Close()

	// Ordinary requests are served meanwhile.
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 200 * time.Millisecond)
			if r := get(t, addr, "/x"); r.StatusCode != 200 {
				t.Errorf("ordinary request during the attack: %d", r.StatusCode)
			}
		}()
	}
	for i, done := range cut {
		select {
		case <-done:
		case <-time.After(30 * time.Second): // the header alone would take 60 s to send
			t.Fatalf("slow client %d was not cut off", i)
		}
	}
	select {
	case err := <-controlDone:
		t.Fatalf("positive control: the server without a header timeout dropped the slow client too (%v)", err)
	default:
	}
	wg.Wait()
}

// TestStalledBody: a body that stops arriving is cut off after the idle
// timeout; one that trickles on is read to the end; an exempt (streaming)
// request may pause (positive control).
func TestStalledBody(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a few seconds")
	}
	streaming := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/stream") }
	addr := serveHardened(t, HardenOptions{BodyIdleTimeout: time.Second, Streaming: streaming}, HTTPLimits{}, okHandler)
	send := func(path string, first string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n%s", path, first)
		return c, bufio.NewReader(c)
	}

	// Stalled: ten bytes of a hundred, then nothing.
	c, br := send("/x", strings.Repeat("a", 10))
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err == nil {
		if resp.StatusCode == 200 {
			t.Fatalf("a stalled body was answered 200")
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) { // EOF or reset: closed
		t.Fatalf("the stalled connection was not closed: %v", err)
	}

	// Trickling: a byte every 300 ms, 3 s in all, three times the idle limit.
	c2, br2 := send("/x", "")
	defer c2.Close()
	for i := 0; i < 100; i++ {
		if _, err := c2.Write([]byte{'b'}); err != nil {
			t.Fatalf("trickle write %d: %v", i, err)
		}
		if i%10 == 0 {
			time.Sleep(300 * time.Millisecond)
		}
	}
	_ = c2.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err = http.ReadResponse(br2, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("trickled body: %v %v", resp, err)
	}

	// Exempt: the same stall on a streaming request (the option's, and a
	// process's stdin) is left alone.
	for _, p := range []string{"/stream", "/v1/sandboxes/sb-x/processes/p1/stdin"} {
		c3, br3 := send(p, strings.Repeat("a", 10))
		defer c3.Close()
		_ = c3.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := br3.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("positive control: the streaming request %s was cut (%v)", p, err)
		}
	}
	// And the server still serves.
	if r := get(t, addr, "/x"); r.StatusCode != 200 {
		t.Fatalf("after: %d", r.StatusCode)
	}
}

// TestConnectionCaps: beyond the per-address cap a connection is refused
// (429) at once; beyond the global cap it waits for a free slot.
func TestConnectionCaps(t *testing.T) {
	hold := func(addr string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("held connection: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("held connection: %d", resp.StatusCode)
		}
		return c, br
	}

	perIP := serveHardened(t, HardenOptions{}, HTTPLimits{MaxConnsPerIP: 2, MaxConns: -1}, okHandler)
	a, _ := hold(perIP)
	b, _ := hold(perIP)
	c, err := net.Dial("tcp", perIP)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third connection from one address: %v %v", resp, err)
	}
	c.Close()
	a.Close()
	var d net.Conn
	waitUntil(t, func() bool { // the slot frees once the server sees the close
		conn, err := net.Dial("tcp", perIP)
		if err != nil {
			return false
		}
		fmt.Fprintf(conn, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil && resp.StatusCode == 200 {
			d = conn
			return true
		}
		conn.Close()
		return false
	})
	d.Close()
	b.Close()

	global := serveHardened(t, HardenOptions{}, HTTPLimits{MaxConns: 2, MaxConnsPerIP: -1}, okHandler)
	g1, _ := hold(global)
	g2, _ := hold(global)
	defer g2.Close()
	g3, err := net.Dial("tcp", global) // the kernel queues it; the server does not take it yet
	if err != nil {
		t.Fatal(err)
	}
	defer g3.Close()
	fmt.Fprintf(g3, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br3 := bufio.NewReader(g3)
	_ = g3.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := br3.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the third connection was served beyond the cap (%v)", err)
	}
	g1.Close() // a slot frees: the waiting connection is served
	_ = g3.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err = http.ReadResponse(br3, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("waiting connection after a slot freed: %v %v", resp, err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	w := httptest.NewRecorder()
	writeError(w, httptest.NewRequest("POST", "/", nil), retryErr{})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "3" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	w = httptest.NewRecorder()
	writeError(w, httptest.NewRequest("POST", "/", nil), errs.New(errs.CodeLimit, "full"))
	if w.Header().Get("Retry-After") != "" {
		t.Fatal("Retry-After on an error that does not know when")
	}
}

type retryErr struct{}

func (retryErr) Error() string             { return "slow down" }
func (retryErr) Unwrap() error             { return errs.New(errs.CodeRateLimited, "slow down") }
func (retryErr) RetryAfter() time.Duration { return 2500 * time.Millisecond }

// FuzzHostCheck: the Host parser never panics (the Origin parser's fuzz
// is in package gate).
func FuzzHostCheck(f *testing.F) {
	for _, s := range []string{"127.0.0.1:7070", "app.example.com", "localhost", "[::1]:7070", "paddock.corp", "b", "x", "", "example.com."} {
		f.Add(s)
	}
	hc := newHostCheck([]string{"paddock.corp", "*.corp"}, "127.0.0.1:7070")
	f.Fuzz(func(t *testing.T, host string) {
		_ = hc.allowed(host)
	})
}
