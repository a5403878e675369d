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
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// The proxy. Every TCP connection a sandbox opens arrives here: redirected
// by the host's nftables (transparent: its original destination is read
// from conntrack) or addressed to the proxy itself (explicit: HTTP_PROXY,
// CONNECT and absolute-URI requests). The sandbox is whoever owns the
// source address.

func (s *Server) acceptLoop(ln net.Listener) {
	backoff := 5 * time.Millisecond
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("egress: accept", "err", err)
			time.Sleep(backoff)
			if backoff < time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 5 * time.Millisecond
		tc, ok := c.(*net.TCPConn)
		if !ok {
			_ = c.Close()
			continue
		}
		select {
		case s.conns <- struct{}{}:
		default:
			s.log.Warn("egress: connection limit reached; refusing", "limit", s.o.MaxConns)
			reset(tc)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.conns }()
			s.handle(tc)
		}()
	}
}

// reset closes c with a TCP RST: the client fails at once instead of
// waiting on a half-open connection.
func reset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}

func tcpAddrPort(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	}
	return netip.AddrPort{}
}

func (s *Server) handle(c *net.TCPConn) {
	src := tcpAddrPort(c.RemoteAddr())
	sb := s.source(src.Addr())
	if sb == nil {
		// Not a sandbox: the nftables rules keep everyone else away from
		// this port; this is the second lock.
		s.log.Debug("egress: connection from an unknown source refused", "src", src.String())
		reset(c)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := &tracked{}
	t.add(c)
	t.add(closerFunc(func() error { cancel(); return nil }))
	pol := sb.policy()
	if !sb.track(t, s.o.MaxConnsPerSandbox) {
		s.report(ctx, sb, Decision{Sandbox: sb.id, Kind: "connect", Mode: pol.Mode, Reason: "too many connections"})
		reset(c)
		return
	}
	defer sb.untrack(t)
	defer t.kill()
	dst, err := originalDst(c)
	if err != nil {
		s.log.Warn("egress: no original destination", "sandbox", sb.id, "err", err)
		reset(c)
		return
	}
	if dst == tcpAddrPort(c.LocalAddr()) {
		s.explicit(ctx, sb, t, c)
		return
	}
	s.transparent(ctx, sb, t, c, dst)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// conn is one proxied connection being decided and relayed.
type conn struct {
	s      *Server
	sb     *sandbox
	t      *tracked
	client *net.TCPConn
	br     *bufio.Reader
	d      Decision
	start  time.Time
	up     atomic.Int64
	down   atomic.Int64
	// established: an explicit client was told its tunnel is open, so a
	// refusal can no longer be an HTTP answer.
	established bool
}

func (s *Server) newConn(sb *sandbox, t *tracked, c *net.TCPConn, via string) *conn {
	return &conn{s: s, sb: sb, t: t, client: c, br: bufio.NewReaderSize(c, peekBufSize), start: time.Now(),
		d: Decision{Sandbox: sb.id, Kind: "connect", Mode: sb.policy().Mode, Via: via}}
}

func (c *conn) setDst(name string, dst netip.AddrPort) {
	c.d.Name, c.d.Addr, c.d.Port = name, dst.Addr().String(), int(dst.Port())
}

// refuse reports a refusal; the caller then answers the client.
func (c *conn) refuse(ctx context.Context, format string, args ...any) {
	c.d.Allowed = false
	c.d.Reason = fmt.Sprintf(format, args...)
	c.d.Duration = time.Since(c.start)
	c.s.report(ctx, c.sb, c.d)
}

// refusal is a relayed connection stopped because of what the client
// sent (a mismatching name, a malformed or disallowed request).
type refusal struct{ error }

// finish reports an allowed connection when it ends. One refused before a
// byte of it went upstream is reported as refused.
func (c *conn) finish(ctx context.Context, err error) {
	c.d.Allowed = true
	c.d.BytesUp, c.d.BytesDown = c.up.Load(), c.down.Load()
	c.d.Duration = time.Since(c.start)
	var r refusal
	switch {
	case errors.As(err, &r) && c.d.BytesUp == 0:
		c.d.Allowed = false
		c.d.Reason = r.Error()
	case errors.As(err, &r):
		c.d.Reason += "; then refused: " + r.Error()
	case err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF):
		c.d.Reason += "; ended: " + err.Error()
	}
	c.s.report(ctx, c.sb, c.d)
}

// transparent handles a connection redirected on its way to dst.
func (s *Server) transparent(ctx context.Context, sb *sandbox, t *tracked, client *net.TCPConn, dst netip.AddrPort) {
	c := s.newConn(sb, t, client, "transparent")
	c.setDst("", dst)
	pol := sb.policy()
	port := int(dst.Port())
	if reason, ok := s.guard.Check(dst.Addr()); !ok {
		c.refuse(ctx, "forbidden address: %s", reason)
		reset(client)
		return
	}
	// How is this destination allowed? By a name the resolver gave this
	// sandbox for that address, by allow_cidr, or by open mode.
	var by, name string
	byAddr := false // allowed as an address: any name may be claimed
	if r, ok := pol.AllowAddr(dst.Addr()); ok {
		by, byAddr = r, true
		if pol.Mode == policy.ModeAllowlist {
			by = "allow_cidr " + r
		}
	}
	cached := sb.answers.names(dst.Addr(), time.Now())
	if pol.Mode == policy.ModeAllowlist {
		for _, n := range cached {
			if r, ok := pol.AllowName(n, port); ok {
				by, name = r, n
				break
			}
		}
	}
	var h *head
	if by == "" {
		// Only what the client says can name the destination: wait for it.
		hh, err := c.classify(s.o.HeaderTimeout)
		if err != nil {
			c.refuse(ctx, "%s is not allowed as an address, and the client named no host: %v", dst.Addr(), err)
			reset(client)
			return
		}
		if hh.name == "" {
			c.refuse(ctx, "%s is not allowed as an address (an IP literal; allow_cidr can allow it)", dst.Addr())
			reset(client)
			return
		}
		c.setDst(hh.name, dst)
		r, ok := pol.AllowName(hh.name, port)
		if !ok {
			c.refuse(ctx, "%s:%d is not in the allowlist", hh.name, port)
			reset(client)
			return
		}
		if !s.nameHasAddr(ctx, sb, hh.name, dst.Addr()) {
			c.refuse(ctx, "%s %q does not match the destination %s", hh.kind.label(), hh.name, dst.Addr())
			reset(client)
			return
		}
		by, name, h = r, hh.name, &hh
	}
	if name == "" && len(cached) > 0 {
		name = cached[0] // what an interceptor is asked about in open mode
	}
	c.setDst(name, dst)
	c.d.Reason = "allowed by " + by
	t.set(name, dst)
	check := func(n string, kind streamKind) error {
		if byAddr || n == name && n != "" {
			return nil
		}
		if n == "" {
			// Every TLS client names the server it wants; one that does not
			// could be fronting for another name behind a shared address.
			if kind == kindTLS {
				return fmt.Errorf("TLS without a server name to %s (allowed only as %s)", dst.Addr(), name)
			}
			return nil
		}
		if _, ok := pol.AllowName(n, port); !ok || !s.nameHasAddr(ctx, sb, n, dst.Addr()) {
			return fmt.Errorf("%s %q does not match the destination %s (%s)", kind.label(), n, dst.Addr(), strings.TrimPrefix(by, "allowed by "))
		}
		return nil
	}
	s.connectAndRelay(ctx, c, name, []netip.Addr{dst.Addr()}, port, h, check)
}

func (k streamKind) label() string {
	switch k {
	case kindTLS:
		return "TLS server name"
	case kindHTTP:
		return "HTTP Host"
	}
	return "name"
}

// nameHasAddr reports whether name resolves to a: as the resolver told
// this sandbox, or as it resolves now. Only called for allowed names.
func (s *Server) nameHasAddr(ctx context.Context, sb *sandbox, name string, a netip.Addr) bool {
	if sb.answers.has(name, a, time.Now()) {
		return true
	}
	addrs, _, err := s.res.addrsOf(ctx, name, s.guard.Check)
	if err != nil {
		return false
	}
	for _, x := range addrs {
		if x == a {
			return true
		}
	}
	return false
}

// classify reads the client's first message, waiting at most d.
func (c *conn) classify(d time.Duration) (head, error) {
	if d > 0 {
		_ = c.client.SetReadDeadline(time.Now().Add(d))
		defer c.client.SetReadDeadline(time.Time{})
	}
	return classify(c.br)
}

// dialAny connects to the first of addrs that answers.
func (s *Server) dialAny(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, netip.AddrPort, error) {
	var last error
	for i, a := range addrs {
		if i == 4 {
			break
		}
		ap := netip.AddrPortFrom(a, uint16(port))
		dctx, cancel := context.WithTimeout(ctx, s.o.DialTimeout)
		up, err := s.o.Dial(dctx, "tcp", ap.String())
		cancel()
		if err == nil {
			return up, ap, nil
		}
		last = err
	}
	if last == nil {
		last = errors.New("no address")
	}
	return nil, netip.AddrPort{}, last
}

// connectAndRelay connects to the destination (after asking the
// interceptor) and relays. h is the client's first message if it has
// been read; check validates names the client sends later.
func (s *Server) connectAndRelay(ctx context.Context, c *conn, name string, addrs []netip.Addr, port int, h *head,
	check func(string, streamKind) error) {
	var plan *Plan
	if name != "" {
		if ic := *s.hooks.icpt.Load(); ic != nil {
			p, err := ic.Intercept(ctx, ConnInfo{Sandbox: c.sb.id, Name: name,
				Addr: netip.AddrPortFrom(addrs[0], uint16(port)), Via: c.d.Via})
			if err != nil {
				c.refuse(ctx, "interceptor refused: %v", err)
				c.fail(http.StatusForbidden, c.d.Reason)
				return
			}
			plan = p
		}
	}
	up, dst, err := s.dialAny(ctx, addrs, port)
	if err != nil {
		c.d.Reason += "; connect failed: " + err.Error()
		c.finish(ctx, nil)
		c.fail(http.StatusBadGateway, "cannot connect: "+err.Error())
		return
	}
	if !c.t.add(up) {
		return
	}
	c.setDst(name, dst)
	c.t.set(name, dst)
	if c.d.Via == "explicit" {
		if _, err := io.WriteString(c.client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		c.established = true
	}
	if plan != nil && h == nil {
		hh, err := c.classify(s.o.HeaderTimeout)
		if err != nil {
			c.refuse(ctx, "malformed first message: %v", err)
			c.fail(http.StatusBadRequest, c.d.Reason)
			return
		}
		h = &hh
	}
	if h != nil {
		if err := check(h.name, h.kind); err != nil {
			c.refuse(ctx, "%v", err)
			c.fail(http.StatusForbidden, c.d.Reason)
			return
		}
	}
	var rerr error
	if plan != nil {
		rerr = s.intercepted(ctx, c, up, name, *h, plan, check)
	} else {
		rerr = s.pipe(ctx, c, up, h, check)
	}
	c.finish(ctx, rerr)
}

// fail answers a refused client: an explicit-proxy client gets an HTTP
// error it can show; a transparent one a TCP reset.
func (c *conn) fail(status int, reason string) {
	if c.d.Via == "explicit" && !c.established {
		writeProxyError(c.client, status, reason)
		return
	}
	reset(c.client)
}

func writeProxyError(w io.Writer, status int, reason string) {
	body := "paddock egress: " + reason + "\n"
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Paddock-Egress: refused\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

// pipe relays without interception. Bytes from the server flow at once
// (protocols where the server speaks first work); the client's first
// message is checked before any of it is forwarded, and an HTTP client's
// every request is.
func (s *Server) pipe(ctx context.Context, c *conn, up net.Conn, h *head, check func(string, streamKind) error) error {
	downDone := make(chan error, 1)
	go func() {
		n, err := io.Copy(c.client, up)
		c.down.Add(n)
		_ = c.client.CloseWrite()
		downDone <- err
	}()
	upErr := func() error {
		if h == nil {
			hh, err := classify(c.br)
			if err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return refusal{err}
			}
			if err := check(hh.name, hh.kind); err != nil {
				return refusal{err}
			}
			h = &hh
		}
		cw := &countWriter{w: up, n: &c.up}
		if h.kind == kindHTTP {
			upgraded, err := requests(c.br, cw, func(host string) error { return check(host, kindHTTP) }, nil)
			if err != nil || !upgraded {
				return err
			}
		}
		return copyRest(cw, c.br, c.client, up)
	}()
	derr := c.endUp(upErr, up, downDone)
	if upErr != nil {
		return upErr
	}
	if derr != nil && !errors.Is(derr, net.ErrClosed) {
		return derr
	}
	return nil
}

// refusalGrace is how long the answers to requests forwarded before a
// refused one may take to come back.
const refusalGrace = 5 * time.Second

// endUp ends the client-to-server direction after it stopped with err
// and waits for the other direction (downDone). A refusal after requests
// already went upstream lets their answers come back for a moment;
// anything else that went wrong closes everything at once.
func (c *conn) endUp(err error, up any, downDone <-chan error) error {
	cw, _ := up.(interface{ CloseWrite() error })
	var r refusal
	switch {
	case err == nil:
		if cw != nil {
			_ = cw.CloseWrite()
		}
	case errors.As(err, &r) && c.up.Load() > 0 && cw != nil:
		_ = cw.CloseWrite()
		select {
		case derr := <-downDone:
			c.t.kill()
			return derr
		case <-time.After(refusalGrace):
		}
		c.t.kill()
	default:
		c.t.kill()
	}
	return <-downDone
}

// copyRest forwards what br holds and then the rest of the client's
// stream (spliced by the kernel when both ends are TCP).
func copyRest(cw *countWriter, br *bufio.Reader, client *net.TCPConn, up net.Conn) error {
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := cw.Write(b); err != nil {
			return err
		}
		_, _ = br.Discard(n)
	}
	var err error
	var n int64
	if tu, ok := up.(*net.TCPConn); ok {
		n, err = tu.ReadFrom(client)
	} else {
		n, err = io.Copy(up, client)
	}
	cw.n.Add(n)
	return err
}

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// requests forwards HTTP/1 requests from br to up (responses flow back on
// their own), checking each one's Host. It returns when the client is done
// (EOF), on a refusal, or after forwarding a protocol upgrade (the rest of
// the stream is then not HTTP).
func requests(br *bufio.Reader, up io.Writer, check func(host string) error, rewrite func(*http.Request) error) (upgraded bool, err error) {
	bw := bufio.NewWriterSize(up, 16<<10)
	upgrading := false
	for {
		first, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, err
		}
		// After an upgrade request, bytes that cannot start a request are
		// the new protocol (a WebSocket frame); a refused upgrade leaves
		// the client speaking HTTP, which stays checked.
		if upgrading && (first[0] < 'A' || first[0] > 'Z') {
			return true, nil
		}
		// The head is bounded before it is parsed (http.ReadRequest alone
		// would buffer a header line of any length).
		if _, err := peekHead(br); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, refusal{fmt.Errorf("malformed HTTP request: %w", err)}
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			return false, refusal{fmt.Errorf("malformed HTTP request: %w", err)}
		}
		if req.Method == "PRI" {
			return false, refusal{errH2C}
		}
		host, err := hostName(req.Host)
		if err != nil || req.Host == "" {
			return false, refusal{errors.New("request without a valid Host")}
		}
		if err := check(host); err != nil {
			return false, refusal{err}
		}
		if rewrite != nil {
			if err := rewrite(req); err != nil {
				return false, refusal{fmt.Errorf("request refused: %w", err)}
			}
		}
		if _, ok := req.Header["User-Agent"]; !ok {
			req.Header["User-Agent"] = []string{""} // Write would add Go's own
		}
		if err := req.Write(bw); err != nil {
			return false, err
		}
		if err := bw.Flush(); err != nil {
			return false, err
		}
		upgrading = isUpgrade(req.Header)
	}
}

func isUpgrade(h http.Header) bool {
	for _, v := range h.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// explicit serves a client that addressed the proxy itself.
func (s *Server) explicit(ctx context.Context, sb *sandbox, t *tracked, client *net.TCPConn) {
	c := s.newConn(sb, t, client, "explicit")
	_ = client.SetReadDeadline(time.Now().Add(s.o.HeaderTimeout))
	req, hostHdr, err := readProxyRequest(c.br)
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
			return tg, fmt.Errorf("%s is not allowed as an address (an IP literal; allow_cidr can allow it)", a)
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
	addrs, refused, err := s.res.addrsOf(ctx, name, s.guard.Check)
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

// connect serves CONNECT host:port.
func (s *Server) connect(ctx context.Context, c *conn, req *http.Request) {
	host, port, err := splitHostPort(req.URL.Host, 0)
	if err != nil {
		writeProxyError(c.client, http.StatusBadRequest, err.Error())
		return
	}
	c.d.Name, c.d.Port = host, port
	tg, err := s.resolveTarget(ctx, c.sb.policy(), host, port)
	if tg.name != "" {
		c.d.Name = tg.name
	}
	if err != nil {
		c.refuse(ctx, "%v", err)
		writeProxyError(c.client, http.StatusForbidden, err.Error())
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
			tg, err = s.resolveTarget(ctx, c.sb.policy(), host, port)
			if tg.name != "" {
				c.d.Name = tg.name
			}
			if err != nil {
				c.refuse(ctx, "%v", err)
				writeProxyError(c.client, http.StatusForbidden, err.Error())
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
