package egress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"

	"golang.org/x/crypto/cryptobyte"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// What the first bytes a client sends say about where it wants to go. The
// proxy reads them without consuming them (bufio.Reader.Peek), so they are
// forwarded untouched once the connection is allowed — TLS is never
// terminated just to look.

type streamKind int

const (
	kindOpaque streamKind = iota // neither TLS nor HTTP/1
	kindTLS
	kindHTTP
)

func (k streamKind) String() string {
	switch k {
	case kindTLS:
		return "tls"
	case kindHTTP:
		return "http"
	}
	return "opaque"
}

// head is a classified stream start.
type head struct {
	kind streamKind
	name string // TLS SNI or HTTP Host (normalised, without port); "" if absent
}

// peekBufSize bounds what a client may send before the proxy knows where it
// goes: one TLS ClientHello or one HTTP request head.
const peekBufSize = 32 << 10

var (
	errTooLarge = errors.New("the first message (ClientHello or request head) is too large")
	errH2C      = errors.New("cleartext HTTP/2 (h2c) cannot be checked; use HTTP/1.1 or TLS")
)

// classify peeks at the start of a stream. An error means a malformed TLS
// ClientHello or HTTP head, which is refused: a parser difference between
// this proxy and the server must not hide the real destination.
func classify(br *bufio.Reader) (head, error) {
	b, err := br.Peek(1)
	if err != nil {
		return head{}, err
	}
	switch {
	case b[0] == 0x16: // TLS handshake record
		hello, err := peekClientHello(br)
		if err != nil {
			return head{}, err
		}
		sni, err := parseClientHello(hello)
		if err != nil {
			return head{}, err
		}
		return head{kind: kindTLS, name: sni}, nil
	case b[0] >= 'A' && b[0] <= 'Z':
		h, err := peekHead(br)
		if errors.Is(err, errNotHTTP) {
			return head{kind: kindOpaque}, nil
		}
		if err != nil {
			return head{}, err
		}
		if bytes.HasPrefix(h, []byte("PRI * HTTP/2.0")) {
			return head{}, errH2C
		}
		host, err := hostOfHead(h)
		if err != nil {
			return head{}, err
		}
		return head{kind: kindHTTP, name: host}, nil
	}
	return head{kind: kindOpaque}, nil
}

var errNotHTTP = errors.New("not HTTP")

// peekHead returns the request head (through the blank line) without
// consuming it. Bytes that cannot start an HTTP/1 request line give
// errNotHTTP (an opaque protocol that happens to start with a capital).
func peekHead(br *bufio.Reader) ([]byte, error) {
	n := 1
	for {
		b, err := br.Peek(n)
		if err != nil && len(b) < n {
			if len(b) == br.Size() {
				return nil, errTooLarge
			}
			return nil, err
		}
		if b, err = br.Peek(br.Buffered()); err != nil {
			return nil, err
		}
		if !looksLikeRequestLine(b) {
			return nil, errNotHTTP
		}
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			return b[:i+4], nil
		}
		if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
			return b[:i+2], nil
		}
		if len(b) >= br.Size() {
			return nil, errTooLarge
		}
		n = len(b) + 1
	}
}

// looksLikeRequestLine accepts the prefix of "METHOD SP target": a method
// token of 3–16 capitals (or '-') and, once seen, a space.
func looksLikeRequestLine(b []byte) bool {
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z', c == '-':
			if i >= 16 {
				return false
			}
		case c == ' ':
			return i >= 3
		default:
			return false
		}
	}
	return true
}

// hostOfHead extracts the Host header of a request head; more than one is
// refused (request smuggling), none gives "".
func hostOfHead(h []byte) (string, error) {
	lines := bytes.Split(h, []byte("\n"))
	var host string
	seen := 0
	for _, l := range lines[1:] {
		l = bytes.TrimRight(l, "\r")
		k, v, ok := bytes.Cut(l, []byte(":"))
		if !ok || !strings.EqualFold(string(k), "host") {
			continue
		}
		seen++
		host = strings.TrimSpace(string(v))
	}
	if seen > 1 {
		return "", errors.New("more than one Host header")
	}
	if host == "" {
		return "", nil
	}
	return hostName(host)
}

// hostName strips a port from an authority and normalises the name; IP
// literals come back as such (bracketless for IPv6).
func hostName(authority string) (string, error) {
	h := authority
	if hh, _, err := net.SplitHostPort(authority); err == nil {
		h = hh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	n, ok := policy.NormalizeName(h)
	if !ok {
		return "", fmt.Errorf("invalid host %q", clip(authority))
	}
	return n, nil
}

// peekClientHello returns the handshake message carried by the TLS records
// at the start of br (a ClientHello may span several records).
func peekClientHello(br *bufio.Reader) ([]byte, error) {
	var msg []byte
	off := 0
	for {
		hdr, err := br.Peek(off + 5)
		if err != nil {
			return nil, fmt.Errorf("TLS record: %w", err)
		}
		rec := hdr[off:]
		if rec[0] != 0x16 || rec[1] != 3 {
			return nil, errors.New("malformed TLS ClientHello: not a handshake record")
		}
		n := int(rec[3])<<8 | int(rec[4])
		if n == 0 || n > 1<<14+256 {
			return nil, errors.New("malformed TLS ClientHello: bad record length")
		}
		if off+5+n > br.Size() {
			return nil, errTooLarge
		}
		all, err := br.Peek(off + 5 + n)
		if err != nil {
			return nil, fmt.Errorf("TLS record: %w", err)
		}
		msg = append(msg, all[off+5:]...)
		off += 5 + n
		if len(msg) >= 4 {
			want := 4 + (int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3]))
			if len(msg) >= want {
				return msg[:want], nil
			}
			if want > br.Size() {
				return nil, errTooLarge
			}
		}
	}
}

// parseClientHello returns the server_name of a ClientHello handshake
// message ("" if it has none). RFC 8446 §4.1.2, RFC 6066 §3.
func parseClientHello(msg []byte) (string, error) {
	bad := errors.New("malformed TLS ClientHello")
	s := cryptobyte.String(msg)
	var typ uint8
	var body cryptobyte.String
	if !s.ReadUint8(&typ) || typ != 1 || !s.ReadUint24LengthPrefixed(&body) || !s.Empty() {
		return "", bad
	}
	var vers uint16
	var random, sessionID, suites, compression cryptobyte.String
	if !body.ReadUint16(&vers) || !body.ReadBytes((*[]byte)(&random), 32) ||
		!body.ReadUint8LengthPrefixed(&sessionID) || !body.ReadUint16LengthPrefixed(&suites) ||
		!body.ReadUint8LengthPrefixed(&compression) {
		return "", bad
	}
	if body.Empty() {
		return "", nil // no extensions
	}
	var exts cryptobyte.String
	if !body.ReadUint16LengthPrefixed(&exts) || !body.Empty() {
		return "", bad
	}
	sni := ""
	found := false
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return "", bad
		}
		if typ != 0 { // server_name
			continue
		}
		if found {
			return "", errors.New("malformed TLS ClientHello: two server_name extensions")
		}
		found = true
		var list cryptobyte.String
		if !data.ReadUint16LengthPrefixed(&list) || !data.Empty() {
			return "", bad
		}
		for !list.Empty() {
			var nameType uint8
			var name cryptobyte.String
			if !list.ReadUint8(&nameType) || !list.ReadUint16LengthPrefixed(&name) {
				return "", bad
			}
			if nameType != 0 { // host_name
				continue
			}
			if sni != "" {
				return "", errors.New("malformed TLS ClientHello: two host names")
			}
			n, ok := policy.NormalizeName(string(name))
			if !ok {
				return "", fmt.Errorf("malformed TLS ClientHello: invalid server name %q", clip(string(name)))
			}
			sni = n
		}
	}
	return sni, nil
}

func clip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
