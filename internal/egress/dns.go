package egress

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/paddockhq/paddock/internal/egress/policy"
)

// serveDNS answers one query of a sandbox. Only names its policy allows
// are resolved; any other name gets NXDOMAIN without a packet leaving the
// host (DNS tunnelling carries data out in query names). Answers in
// forbidden ranges are dropped (DNS rebinding), and what was answered is
// remembered for the transparent proxy.
func (s *Server) serveDNS(w dns.ResponseWriter, req *dns.Msg) {
	src := addrOf(w.RemoteAddr())
	sb := s.source(src)
	out := new(dns.Msg)
	if len(req.Question) > 0 {
		out.SetReply(req)
	} else {
		out.SetRcode(req, dns.RcodeFormatError)
	}
	out.RecursionAvailable = true
	if sb == nil {
		out.Rcode = dns.RcodeRefused
		_ = w.WriteMsg(out)
		return
	}
	if req.Opcode != dns.OpcodeQuery || len(req.Question) != 1 || req.Response {
		if req.Opcode != dns.OpcodeQuery {
			out.Rcode = dns.RcodeNotImplemented
		} else {
			out.Rcode = dns.RcodeFormatError
		}
		_ = w.WriteMsg(out)
		return
	}
	q := req.Question[0]
	pol := sb.policy()
	name, valid := policy.NormalizeName(strings.TrimSuffix(q.Name, "."))
	d := Decision{Sandbox: sb.id, Kind: "dns", Mode: pol.Mode, Via: "dns", Name: name, Port: 53}
	if !valid {
		d.Name = clip(q.Name)
	}
	ctx := context.Background()
	deny := func(rcode int, reason string) {
		out.Rcode = rcode
		write(w, req, out)
		d.Reason = reason
		s.report(ctx, sb, d)
	}
	if q.Qclass != dns.ClassINET {
		deny(dns.RcodeRefused, "only class IN is answered")
		return
	}
	if !valid {
		deny(dns.RcodeNameError, "not a valid host name")
		return
	}
	if _, ok := pol.AllowName(name, 0); !ok {
		deny(dns.RcodeNameError, "name not allowed")
		return
	}
	switch q.Qtype {
	case dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR:
		deny(dns.RcodeRefused, "query type not answered")
		return
	case dns.TypeHTTPS, dns.TypeSVCB:
		// No answer: their address hints would bypass the filtering of A
		// and AAAA below, and an ECH config would hide the real name from
		// the proxy. Clients fall back to A/AAAA.
		write(w, req, out)
		return
	}
	// Queries being answered are bounded per sandbox, per tenant and in
	// all: with one shared bound, one tenant asking for slow names could
	// leave every other tenant's resolution failing (resource starvation,
	// issue 14 item 11).
	release, err := s.dnsQ.acquire(sb.tenantKey(s.o.TenantOf), sb.id)
	if err != nil {
		out.Rcode = dns.RcodeServerFailure
		write(w, req, out)
		d.Reason = err.Error()
		s.report(ctx, sb, d)
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	m, err := s.res.lookup(lctx, name, q.Qtype)
	cancel()
	release()
	if err != nil {
		s.log.Debug("egress: upstream DNS failed", "sandbox", sb.id, "name", name, "err", err)
		out.Rcode = dns.RcodeServerFailure
		write(w, req, out)
		return
	}
	out.Rcode = m.Rcode
	now := time.Now()
	var refused string
	for _, rr := range m.Answer {
		if a, isAddr := rrAddr(rr); isAddr {
			if reason, good := s.guard.Check(a); !good {
				if refused == "" {
					refused = a.String() + " is " + reason
				}
				continue
			}
			sb.answers.add(name, a, time.Duration(rr.Header().Ttl)*time.Second, now)
		}
		out.Answer = append(out.Answer, dns.Copy(rr))
	}
	for _, rr := range m.Ns {
		if rr.Header().Rrtype == dns.TypeSOA {
			out.Ns = append(out.Ns, dns.Copy(rr))
		}
	}
	write(w, req, out)
	if refused != "" {
		d.Reason = "answer refused (DNS rebinding?): " + refused
		s.report(ctx, sb, d)
		return
	}
	if m := *s.hooks.metrics.Load(); m != nil {
		m.EgressDecision(true, pol.Mode)
	}
}

// write sends out, truncated to what the client can take over UDP.
func write(w dns.ResponseWriter, req, out *dns.Msg) {
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		size := dns.MinMsgSize
		if opt := req.IsEdns0(); opt != nil {
			size = int(opt.UDPSize())
			if size > 1232 {
				size = 1232
			}
			if size < dns.MinMsgSize {
				size = dns.MinMsgSize
			}
			out.SetEdns0(uint16(size), false)
		}
		out.Truncate(size)
	}
	_ = w.WriteMsg(out)
}

func addrOf(a net.Addr) netip.Addr {
	switch v := a.(type) {
	case *net.UDPAddr:
		ip, _ := netip.AddrFromSlice(v.IP)
		return ip.Unmap()
	case *net.TCPAddr:
		ip, _ := netip.AddrFromSlice(v.IP)
		return ip.Unmap()
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
