package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// clientHello returns the bytes a real TLS client sends first.
func clientHello(t testing.TB, sni string) []byte {
	t.Helper()
	c, s := net.Pipe()
	defer s.Close()
	go func() {
		tc := tls.Client(c, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
		_ = tc.Handshake()
		c.Close()
	}()
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	var buf bytes.Buffer
	tmp := make([]byte, 64<<10)
	n, err := s.Read(tmp)
	if err != nil {
		t.Fatal(err)
	}
	buf.Write(tmp[:n])
	return buf.Bytes()
}

func TestClassify(t *testing.T) {
	hello := clientHello(t, "api.example.com")
	noSNI := clientHello(t, "")
	// The same ClientHello split over two records.
	body := hello[5:]
	split := append([]byte{0x16, 3, 1, 0, 10}, body[:10]...)
	split = append(split, 0x16, 3, 1, byte((len(body)-10)>>8), byte(len(body)-10))
	split = append(split, body[10:]...)
	for _, tc := range []struct {
		name string
		in   []byte
		kind streamKind
		host string
		err  string
	}{
		{"tls", hello, kindTLS, "api.example.com", ""},
		{"tls without sni", noSNI, kindTLS, "", ""},
		{"tls over two records", split, kindTLS, "api.example.com", ""},
		{"http", []byte("GET / HTTP/1.1\r\nHost: Example.COM:8080\r\nAccept: */*\r\n\r\n"), kindHTTP, "example.com", ""},
		{"http bare lf", []byte("GET / HTTP/1.1\nhost: a.test\n\n"), kindHTTP, "a.test", ""},
		{"http 1.0 without host", []byte("GET / HTTP/1.0\r\n\r\n"), kindHTTP, "", ""},
		{"http ip host", []byte("GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n"), kindHTTP, "2001:db8::1", ""},
		{"two hosts", []byte("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n"), 0, "", "more than one Host"},
		{"bad host", []byte("GET / HTTP/1.1\r\nHost: a b\r\n\r\n"), 0, "", "invalid host"},
		{"h2c", []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, "", "h2c"},
		{"ssh", []byte("SSH-2.0-OpenSSH_9.2\r\n"), kindOpaque, "", ""},
		{"binary", []byte{0, 1, 2, 3}, kindOpaque, "", ""},
		{"capital but not http", []byte("HELLO\r\n"), kindOpaque, "", ""},
		{"tls not handshake", []byte{0x16, 0x01, 0, 0, 1, 0}, 0, "", "malformed"},
		{"tls truncated", []byte{0x16, 3, 1, 0, 4, 1, 0, 0, 9}, 0, "", "TLS record"},
		{"tls not a client hello", []byte{0x16, 3, 1, 0, 4, 2, 0, 0, 0}, 0, "", "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := classify(bufio.NewReaderSize(bytes.NewReader(tc.in), peekBufSize))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("classify = %+v, %v; want an error containing %q", h, err, tc.err)
				}
				return
			}
			if err != nil || h.kind != tc.kind || h.name != tc.host {
				t.Fatalf("classify = %+v, %v; want %v %q", h, err, tc.kind, tc.host)
			}
		})
	}
}

func TestClassifyLeavesBytes(t *testing.T) {
	in := "GET / HTTP/1.1\r\nHost: a.test\r\n\r\nBODY"
	br := bufio.NewReaderSize(strings.NewReader(in), peekBufSize)
	if _, err := classify(br); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	if string(rest) != in {
		t.Fatalf("classify consumed bytes: %q", rest)
	}
}

func TestClassifyTooLarge(t *testing.T) {
	big := "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", peekBufSize) + "\r\n\r\n"
	_, err := classify(bufio.NewReaderSize(strings.NewReader(big), peekBufSize))
	if err != errTooLarge {
		t.Fatalf("err = %v, want errTooLarge", err)
	}
}

func FuzzClassify(f *testing.F) {
	f.Add(clientHello(f, "a.example.com"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x.test\r\n\r\n"))
	f.Add([]byte("CONNECT a:443 HTTP/1.1\r\n\r\n"))
	f.Add([]byte{0x16, 3, 3, 0, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := classify(bufio.NewReaderSize(bytes.NewReader(b), peekBufSize))
		if err != nil {
			return
		}
		if h.name != "" {
			if n, err := hostName(h.name); err != nil || n != h.name {
				t.Fatalf("classify gave a name that is not normalised: %q", h.name)
			}
		}
	})
}

func FuzzParseClientHello(f *testing.F) {
	f.Add(clientHello(f, "a.example.com")[5:])
	f.Add(clientHello(f, "")[5:])
	f.Fuzz(func(t *testing.T, msg []byte) {
		sni, err := parseClientHello(msg)
		if err == nil && sni != "" && strings.ToLower(sni) != sni {
			t.Fatalf("server name not normalised: %q", sni)
		}
	})
}

func FuzzHostOfHead(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nHOST: [::1]:8\r\nhost: b\r\n\r\n"))
	f.Fuzz(func(t *testing.T, h []byte) {
		_, _ = hostOfHead(h)
	})
}
