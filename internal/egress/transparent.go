package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// Transparent connections (redirected by nftables; the original
// destination comes from conntrack) and what both modes share: dialing,
// asking the interceptor, answering a refused client.

// transparent handles a connection redirected on its way to dst.
func (s *Server) transparent(ctx context.Context, sb *sandbox, t *tracked, client *net.TCPConn, dst netip.AddrPort) {
	c := s.newConn(sb, t, client, "transparent")
	c.setDst("", dst)
	pol := sb.policy()
	port := int(dst.Port())
	// Refused connections are reset before they are reported: the slot
	// is free at once, whatever the audit log takes.
	if reason, ok := s.guard.Check(dst.Addr()); !ok {
		c.drop()
		c.refuse(ctx, "forbidden address: %s", reason)
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
	// An allowed name wins over deny_cidr in open mode: Reach, where the
	// address alone was refused.
	if pol.Mode == policy.ModeAllowlist || by == "" {
		for _, n := range cached {
			if r, ok := pol.Reach(n, port, dst.Addr()); ok {
				by, name = r, n
				break
			}
		}
	}
	var h *head
	if by == "" {
		// Only what the client says can name the destination: wait for it.
		hh, err := c.classify()
		if err != nil {
			c.drop()
			c.refuse(ctx, "%s is not allowed as an address, and the client named no host: %v", dst.Addr(), err)
			return
		}
		if hh.name == "" {
			c.drop()
			c.refuse(ctx, "%s", addrRefusal(pol, dst.Addr()))
			return
		}
		c.setDst(hh.name, dst)
		r, ok := pol.Reach(hh.name, port, dst.Addr())
		if !ok {
			c.drop()
			if d := pol.DeniedBy(dst.Addr()); d != "" {
				c.refuse(ctx, "%s is denied (deny_cidr %s) and %s:%d is not allowed", dst.Addr(), d, hh.name, port)
			} else {
				c.refuse(ctx, "%s:%d is not in the allowlist", hh.name, port)
			}
			return
		}
		if !s.nameHasAddr(ctx, sb, hh.name, dst.Addr()) {
			c.drop()
			c.refuse(ctx, "%s %q does not match the destination %s", hh.kind.label(), hh.name, dst.Addr())
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
		if _, ok := pol.Reach(n, port, dst.Addr()); !ok || !s.nameHasAddr(ctx, sb, n, dst.Addr()) {
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

// classify reads the client's first message: its first byte within
// FirstByteTimeout, the whole of it within HeaderTimeout. A connection
// that sends nothing is closed quickly (it holds a slot meanwhile).
func (c *conn) classify() (head, error) {
	if err := c.s.awaitFirstByte(c.client, c.br); err != nil {
		return head{}, err
	}
	defer c.client.SetReadDeadline(time.Time{})
	return classify(c.br)
}

// awaitFirstByte waits FirstByteTimeout for the client's first byte and
// leaves the deadline at HeaderTimeout from now for the rest of its
// first message (the caller clears it).
func (s *Server) awaitFirstByte(client *net.TCPConn, br *bufio.Reader) error {
	start := time.Now()
	_ = client.SetReadDeadline(start.Add(s.o.FirstByteTimeout))
	if _, err := br.Peek(1); err != nil {
		_ = client.SetReadDeadline(time.Time{})
		return err
	}
	return client.SetReadDeadline(start.Add(s.o.HeaderTimeout))
}

// drop resets the client and gives its slot back at once.
func (c *conn) drop() {
	reset(c.client)
	c.t.kill()
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
		hh, err := c.classify()
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

// addrRefusal says why an address alone is not allowed.
func addrRefusal(pol *policy.Policy, a netip.Addr) string {
	if d := pol.DeniedBy(a); d != "" {
		return fmt.Sprintf("%s is denied (deny_cidr %s)", a, d)
	}
	return fmt.Sprintf("%s is not allowed as an address (an IP literal; allow_cidr can allow it)", a)
}
