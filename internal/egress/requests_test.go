package egress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRequestsChecksEveryHost(t *testing.T) {
	allowOnly := func(name string) func(string) error {
		return func(h string) error {
			if h != name {
				return fmt.Errorf("host %s refused", h)
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name, in string
		upgraded bool
		err      string
		sent     []string // request lines that went upstream
		notSent  string
		answers  []string // the upstream's answer to each request, in turn
	}{
		{name: "two allowed", in: "GET /a HTTP/1.1\r\nHost: a.test\r\n\r\nGET /b HTTP/1.1\r\nHost: a.test:80\r\n\r\n",
			sent: []string{"GET /a", "GET /b"}},
		{name: "second refused", in: "GET /a HTTP/1.1\r\nHost: a.test\r\n\r\nGET /b HTTP/1.1\r\nHost: b.test\r\n\r\n",
			err: "b.test refused", sent: []string{"GET /a"}, notSent: "GET /b"},
		{name: "absolute form names its host", in: "GET http://b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
			err: "b.test refused", notSent: "GET"},
		{name: "body is forwarded, not parsed", in: "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 25\r\n\r\nGET / HTTP/1.1\r\nHost: b\r\n",
			sent: []string{"POST /", "GET / HTTP/1.1\r\nHost: b"}},
		{name: "websocket after upgrade", in: "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello",
			upgraded: true, sent: []string{"GET /ws"}, answers: []string{switched}},
		{name: "refused upgrade stays checked", in: "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.1\r\nHost: b.test\r\n\r\n",
			err: "b.test refused", sent: []string{"GET /ws"}, answers: []string{okAnswer}},
		// Smuggling through Connection: Upgrade (issue 14 item 4): the
		// upstream answers 200, and the next request does not look like
		// one to a relay that guesses (lower case, a leading CRLF).
		{name: "upgrade answered 200, then a lower-case request", in: "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nget / HTTP/1.1\r\nHost: b.test\r\n\r\n",
			err: "*", sent: []string{"GET /ws"}, notSent: "b.test", answers: []string{okAnswer}},
		{name: "upgrade answered 200, then a leading CRLF", in: "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: b.test\r\n\r\n",
			err: "*", sent: []string{"GET /ws"}, notSent: "b.test", answers: []string{okAnswer}},
		{name: "upgrade never answered", in: "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nget / HTTP/1.1\r\nHost: b.test\r\n\r\n",
			err: "*", notSent: "b.test", answers: []string{""}},
		{name: "upgrade answered with garbage", in: "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nget / HTTP/1.1\r\nHost: b.test\r\n\r\n",
			err: "*", notSent: "b.test", answers: []string{"\x00\x01 not http\r\n\r\n"}},
		{name: "101 after interim and pipelined answers", in: "HEAD /a HTTP/1.1\r\nHost: a.test\r\n\r\nGET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello",
			upgraded: true, sent: []string{"HEAD /a", "GET /ws"},
			answers: []string{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n" + switched}},
		{name: "101 to a request that asked for none", in: "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n\x81\x05hello",
			err: "malformed", answers: []string{switched}},
		{name: "h2c upgrade is not offered", in: "GET / HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n",
			sent: []string{"GET /"}, notSent: "h2c", answers: []string{switched}},
		{name: "h2c", in: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", err: "h2c"},
		// Both framings: re-serialised with one, so the server cannot
		// read the body differently from the proxy (request smuggling).
		{name: "smuggling", in: "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			sent: []string{"Transfer-Encoding: chunked"}, notSent: "Content-Length"},
		{name: "two hosts", in: "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n", err: "malformed"},
		{name: "huge header", in: "GET / HTTP/1.1\r\nHost: a.test\r\nX: " + strings.Repeat("x", 2*peekBufSize) + "\r\n\r\n", err: "too large"},
		{name: "no host", in: "GET / HTTP/1.0\r\n\r\n", err: "valid Host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t, tc.answers)
			var upgraded bool
			var err error
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				upgraded, err = requests(bufio.NewReaderSize(strings.NewReader(tc.in), peekBufSize), up, allowOnly("a.test"), nil, up.w)
			}()
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("requests did not return")
			}
			if tc.err != "" {
				var r refusal
				if err == nil || tc.err != "*" && !strings.Contains(err.Error(), tc.err) || !errors.As(err, &r) {
					t.Fatalf("err = %v, want a refusal containing %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if upgraded != tc.upgraded {
				t.Errorf("upgraded = %v", upgraded)
			}
			for _, s := range tc.sent {
				if !strings.Contains(up.String(), s) {
					t.Errorf("upstream did not get %q:\n%s", s, up.String())
				}
			}
			if tc.notSent != "" && strings.Contains(up.String(), tc.notSent) {
				t.Errorf("upstream got %q:\n%s", tc.notSent, up.String())
			}
		})
	}
}

const (
	switched = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
	okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
)

// fakeUpstream records what requests sends and answers each write (one
// request: requests flushes after each) with the next canned answer,
// through a respWatch as the relay's other direction would; "" closes.
type fakeUpstream struct {
	bytes.Buffer
	answers []string
	down    *io.PipeWriter
	w       *respWatch
}

func newFakeUpstream(t *testing.T, answers []string) *fakeUpstream {
	pr, pw := io.Pipe()
	f := &fakeUpstream{answers: answers, down: pw, w: newRespWatch()}
	f.w.start()
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.w.copyDown(io.Discard, pr, &n)
	}()
	t.Cleanup(func() {
		pw.Close()
		f.w.stop()
		<-done
	})
	return f
}

func (f *fakeUpstream) Write(p []byte) (int, error) {
	n, _ := f.Buffer.Write(p)
	if len(f.answers) > 0 {
		a := f.answers[0]
		f.answers = f.answers[1:]
		if a == "" {
			f.down.Close()
		} else if _, err := f.down.Write([]byte(a)); err != nil {
			return n, err
		}
	}
	return n, nil
}

func FuzzRequests(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: b.test\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var up bytes.Buffer
		_, _ = requests(bufio.NewReaderSize(bytes.NewReader(in), peekBufSize), &up, func(h string) error {
			if h != "a.test" {
				return errors.New("no")
			}
			return nil
		}, nil, nil)
		// Whatever went upstream is requests for a.test only (the last
		// may be cut short where the client's input ended).
		br := bufio.NewReader(&up)
		for {
			if _, err := br.Peek(1); err != nil {
				return
			}
			host, err := readAnyRequest(br)
			if host != "" {
				if h, _ := hostName(host); h != "a.test" {
					t.Fatalf("a request for %q went upstream", host)
				}
			}
			if err != nil {
				if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
					return
				}
				t.Fatalf("upstream got something that does not parse: %v\n%q", err, up.String())
			}
		}
	})
}

// readAnyRequest reads one request and drains its body, returning its Host.
func readAnyRequest(br *bufio.Reader) (string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return req.Host, err
}
