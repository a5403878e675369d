package egress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
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
			upgraded: true, sent: []string{"GET /ws"}},
		{name: "refused upgrade stays checked", in: "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.1\r\nHost: b.test\r\n\r\n",
			err: "b.test refused", sent: []string{"GET /ws"}},
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
			var up bytes.Buffer
			upgraded, err := requests(bufio.NewReaderSize(strings.NewReader(tc.in), peekBufSize), &up, allowOnly("a.test"), nil)
			if tc.err != "" {
				var r refusal
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &r) {
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
		}, nil)
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
