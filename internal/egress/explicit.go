package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// The explicit proxy: clients that address the proxy itself (CONNECT and
// absolute-URI requests).

// explicit serves a client that addressed the proxy itself.
func (s *Server) explicit(ctx context.Context, sb *sandbox, t *tracked, client *net.TCPConn) {
	c := s.newConn(sb, t, client, "explicit")
	var req *http.Request
	var hostHdr string
	err := s.awaitFirstByte(client, c.br)
	if err == nil {
		req, hostHdr, err = readProxyRequest(c.br)
	}
	_ = client.SetReadDeadline(time.Time{})
	if err != nil {
		if !errors.Is(err, io.EOF) {
			writeProxyError(client, http.StatusBadRequest, err.Error())
		}
		return
	}
	if req.Method == http.MethodConnect {
		s.connect(ctx, c, req)
		return
	}
	s.forward(ctx, c, req, hostHdr)
}

// readProxyRequest reads one request and the Host header it carried
// (http.ReadRequest drops it for absolute-URI requests).
func readProxyRequest(br *bufio.Reader) (*http.Request, string, error) {
	h, err := peekHead(br)
	if err != nil {
		if errors.Is(err, errNotHTTP) {
			return nil, "", errors.New("this is an HTTP proxy: send CONNECT or an absolute-URI request")
		}
		return nil, "", err
	}
	host, err := hostOfHead(h)
	if err != nil {
		return nil, "", err
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, "", fmt.Errorf("malformed request: %w", err)
	}
	return req, host, nil
}

// target is an explicit request's destination, decided.
type target struct {
	name  string // "" for an IP literal
	addrs []netip.Addr
	port  int
	by    string
}

// resolveTarget decides host:port for an explicit request: a name must be
// allowed and resolve to addresses that are not refused (the proxy
// resolves; a rebinding answer is refused); an IP literal needs
// allow_cidr or open mode.
func (s *Server) resolveTarget(ctx context.Context, pol *policy.Policy, host string, port int) (target, error) {
	tg := target{port: port}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		a = a.Unmap().WithZone("")
		if reason, ok := s.guard.Check(a); !ok {
			return tg, fmt.Errorf("forbidden address: %s", reason)
		}
		by, ok := pol.AllowAddr(a)
		if !ok {
			return tg, errors.New(addrRefusal(pol, a))
		}
		tg.addrs, tg.by = []netip.Addr{a}, by
		return tg, nil
	}
	name, ok := policy.NormalizeName(host)
	if !ok {
		return tg, fmt.Errorf("invalid host %q", clip(host))
	}
	tg.name = name
	by, ok := pol.AllowName(name, port)
	if !ok {
		return tg, fmt.Errorf("%s:%d is not in the allowlist", name, port)
	}
	tg.by = by
	// Each address the name resolves to is the guard's, then deny_cidr's
	// (which an allowed name wins over: Reach).
	addrs, refused, err := s.res.addrsOf(ctx, name, func(a netip.Addr) (string, bool) {
		if reason, ok := s.guard.Check(a); !ok {
			return reason, false
		}
		if _, ok := pol.Reach(name, port, a); !ok {
			return "deny_cidr " + pol.DeniedBy(a), false
		}
		return "", true
	})
	if err != nil {
		return tg, fmt.Errorf("cannot resolve %s: %v", name, err)
	}
	if len(addrs) == 0 {
		if refused != "" {
			return tg, fmt.Errorf("%s resolves only to refused addresses (%s)", name, refused)
		}
		return tg, fmt.Errorf("%s has no address", name)
	}
	tg.addrs = addrs
	return tg, nil
}

func splitHostPort(authority string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(authority)
	if err != nil {
		if def == 0 {
			return "", 0, fmt.Errorf("%q needs a port", clip(authority))
		}
		return strings.Trim(authority, "[]"), def, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("invalid port in %q", clip(authority))
	}
	return host, port, nil
}

// allowTarget is resolveTarget for the connection c, which it names the
// destination of; a refused one is recorded and answered 403 (ok false).
func (s *Server) allowTarget(ctx context.Context, c *conn, host string, port int) (target, bool) {
	tg, err := s.resolveTarget(ctx, c.sb.policy(), host, port)
	if tg.name != "" {
		c.d.Name = tg.name
	}
	if err != nil {
		c.refuse(ctx, "%v", err)
		writeProxyError(c.client, http.StatusForbidden, err.Error())
		return tg, false
	}
	return tg, true
}

// connect serves CONNECT host:port.
func (s *Server) connect(ctx context.Context, c *conn, req *http.Request) {
	host, port, err := splitHostPort(req.URL.Host, 0)
	if err != nil {
		writeProxyError(c.client, http.StatusBadRequest, err.Error())
		return
	}
	c.d.Name, c.d.Port = host, port
	tg, ok := s.allowTarget(ctx, c, host, port)
	if !ok {
		return
	}
	c.d.Reason = "allowed by " + tg.by
	c.t.set(tg.name, netip.AddrPortFrom(tg.addrs[0], uint16(port)))
	// The client declared its destination: what it says inside the tunnel
	// must be the same name.
	check := func(n string, kind streamKind) error {
		switch {
		case tg.name == "" || n == tg.name:
			return nil
		case n == "" && kind == kindTLS:
			return fmt.Errorf("TLS without a server name in a tunnel to %s", tg.name)
		case n == "":
			return nil
		}
		return fmt.Errorf("%s %q does not match the CONNECT target %s", kind.label(), n, tg.name)
	}
	s.connectAndRelay(ctx, c, tg.name, tg.addrs, port, nil, check)
}

// forward serves absolute-URI HTTP requests (plain http:// through the
// proxy), each decided on its own; responses are parsed so that one client
// connection can reach several hosts in turn.
func (s *Server) forward(ctx context.Context, c *conn, req *http.Request, hostHdr string) {
	var (
		up     net.Conn
		upBr   *bufio.Reader
		cur    string // host:port of up
		tg     target
		plan   *Plan
		counts = &countWriter{w: c.client, n: &c.down}
	)
	closeUp := func() {
		if up != nil {
			_ = up.Close()
			c.finish(ctx, nil)
			up = nil
		}
	}
	defer closeUp()
	for {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			writeProxyError(c.client, http.StatusBadRequest, "send an absolute http:// URI, or CONNECT for https")
			return
		}
		host, port, err := splitHostPort(req.URL.Host, 80)
		if err != nil {
			writeProxyError(c.client, http.StatusBadRequest, err.Error())
			return
		}
		urlHost, _ := hostName(req.URL.Host)
		if hostHdr != "" && hostHdr != urlHost {
			c.d.Name, c.d.Port = urlHost, port
			c.refuse(ctx, "HTTP Host %q does not match the request's URI host %s", hostHdr, urlHost)
			writeProxyError(c.client, http.StatusForbidden, c.d.Reason)
			return
		}
		if key := net.JoinHostPort(host, strconv.Itoa(port)); key != cur || up == nil {
			closeUp()
			c.start = time.Now()
			c.up.Store(0)
			c.down.Store(0)
			c.d.Name, c.d.Addr, c.d.Port, c.d.Reason = host, "", port, ""
			var ok bool
			if tg, ok = s.allowTarget(ctx, c, host, port); !ok {
				return
			}
			plan = nil
			if ic := *s.hooks.icpt.Load(); ic != nil && tg.name != "" {
				if plan, err = ic.Intercept(ctx, ConnInfo{Sandbox: c.sb.id, Name: tg.name,
					Addr: netip.AddrPortFrom(tg.addrs[0], uint16(port)), Via: "explicit"}); err != nil {
					c.refuse(ctx, "interceptor refused: %v", err)
					writeProxyError(c.client, http.StatusForbidden, c.d.Reason)
					return
				}
			}
			conn, dst, err := s.dialAny(ctx, tg.addrs, port)
			if err != nil {
				c.refuse(ctx, "allowed by %s; connect failed: %v", tg.by, err)
				writeProxyError(c.client, http.StatusBadGateway, "cannot connect: "+err.Error())
				return
			}
			if !c.t.add(conn) {
				return
			}
			up, upBr, cur = conn, bufio.NewReaderSize(conn, peekBufSize), key
			c.setDst(tg.name, dst)
			c.t.set(tg.name, dst)
			c.d.Reason = "allowed by " + tg.by
		}
		for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate"} {
			req.Header.Del(h)
		}
		req.RequestURI = ""
		if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
			// Answer for the server, so the client sends its body now.
			req.Header.Del("Expect")
			if _, err := io.WriteString(c.client, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
				return
			}
		}
		if plan != nil && plan.Request != nil {
			if err := plan.Request(req); err != nil {
				c.refuse(ctx, "request refused: %v", err)
				writeProxyError(c.client, http.StatusForbidden, c.d.Reason)
				return
			}
			req.Host = tg.name + portSuffix(port, 80)
		}
		if _, ok := req.Header["User-Agent"]; !ok {
			req.Header["User-Agent"] = []string{""}
		}
		if err := req.Write(&countWriter{w: up, n: &c.up}); err != nil {
			writeProxyError(c.client, http.StatusBadGateway, "upstream write failed")
			return
		}
		resp, err := readResponse(upBr, req, counts)
		if err != nil {
			writeProxyError(c.client, http.StatusBadGateway, "upstream answered badly: "+err.Error())
			return
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			err := resp.Write(counts)
			if err == nil {
				err = s.splice(c, up, upBr)
			}
			return
		}
		werr := resp.Write(counts)
		resp.Body.Close()
		if werr != nil || req.Close || resp.Close {
			return
		}
		_ = c.client.SetReadDeadline(time.Now().Add(s.o.IdleTimeout))
		req, hostHdr, err = readProxyRequest(c.br)
		_ = c.client.SetReadDeadline(time.Time{})
		if err != nil {
			if !errors.Is(err, io.EOF) && !isTimeout(err) {
				writeProxyError(c.client, http.StatusBadRequest, err.Error())
			}
			return
		}
		if req.Method == http.MethodConnect {
			writeProxyError(c.client, http.StatusBadRequest, "CONNECT must be the first request of a connection")
			return
		}
	}
}

func portSuffix(port, def int) string {
	if port == def {
		return ""
	}
	return ":" + strconv.Itoa(port)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// readResponse reads the response to req, forwarding interim (1xx)
// responses other than 101 to the client.
func readResponse(br *bufio.Reader, req *http.Request, client io.Writer) (*http.Response, error) {
	for i := 0; ; i++ {
		if err := peekResponseHead(br); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols || i >= 8 {
			return resp, nil
		}
		if err := resp.Write(client); err != nil {
			return nil, err
		}
	}
}

// peekResponseHead bounds a response head before it is parsed.
func peekResponseHead(br *bufio.Reader) error {
	for n := 1; ; {
		b, err := br.Peek(n)
		if err != nil && len(b) < n {
			return err
		}
		if b, err = br.Peek(br.Buffered()); err != nil {
			return err
		}
		if bytes.Contains(b, []byte("\r\n\r\n")) || bytes.Contains(b, []byte("\n\n")) {
			return nil
		}
		if len(b) >= br.Size() {
			return errTooLarge
		}
		n = len(b) + 1
	}
}

// splice relays both ways after a protocol upgrade in explicit mode.
func (s *Server) splice(c *conn, up net.Conn, upBr *bufio.Reader) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if n := upBr.Buffered(); n > 0 {
			b, _ := upBr.Peek(n)
			m, _ := c.client.Write(b)
			c.down.Add(int64(m))
			_, _ = upBr.Discard(n)
		}
		n, _ := io.Copy(c.client, up)
		c.down.Add(n)
		_ = c.client.CloseWrite()
	}()
	err := copyRest(&countWriter{w: up, n: &c.up}, c.br, c.client, up)
	if tc, ok := up.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	<-done
	return err
}
