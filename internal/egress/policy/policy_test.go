package policy

import (
	"golang.org/x/net/publicsuffix"

	"net/netip"
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "example.com", want: "example.com"},
		{in: "Example.COM.", want: "example.com"},
		{in: "*.example.com", want: "*.example.com"},
		{in: "api.example.com:443", want: "api.example.com:443"},
		{in: "*.example.co.uk:8443", want: "*.example.co.uk:8443"},
		{in: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
		{in: "_acme.example.com", want: "_acme.example.com"},
		{in: "gitlab", want: "gitlab"}, // internal single-label names (--dns-host)
		{in: "*", err: "wildcard"},
		{in: "*.com", err: "public suffix"},
		{in: "*.co.uk", err: "public suffix"},
		{in: "*.github.io", err: "public suffix"},
		{in: "*.internal", err: "public suffix"},
		{in: "*example.com", err: "wildcard"},
		{in: "a.*.example.com", err: "wildcard"},
		{in: "*.*.example.com", err: "wildcard"},
		{in: "", err: "empty"},
		{in: "exa mple.com", err: "invalid character"},
		{in: "a..b", err: "empty label"},
		{in: "-a.com", err: "start or end"},
		{in: "bücher.de", err: "xn--"},
		{in: "1.2.3.4", err: "IP address"},
		{in: "1.2.3.4:80", err: "IP address"},
		{in: "10.0.0.300", err: "numeric"},
		{in: "[::1]:443", err: "IPv6"},
		{in: "2001:db8::1", err: "IPv6"},
		{in: "example.com:0", err: "port"},
		{in: "example.com:65536", err: "port"},
		{in: "example.com:http", err: "port"},
		{in: "example.com:", err: "port"},
		{in: strings.Repeat("a", 64) + ".com", err: "63"},
		{in: strings.Repeat("abcdefg.", 40) + "com", err: "long"},
	} {
		p, err := ParsePattern(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePattern(%q) = %v, %v; want error containing %q", tc.in, p, err, tc.err)
			}
			continue
		}
		if err != nil || p.String() != tc.want {
			t.Errorf("ParsePattern(%q) = %q, %v; want %q", tc.in, p.String(), err, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	pol, err := Compile(ModeAllowlist, []string{"example.com", "*.svc.example.org", "api.test:443"}, []string{"203.0.113.0/24", "2001:db8::1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		port int
		ok   bool
	}{
		{"example.com", 80, true},
		{"example.com", 0, true},
		{"www.example.com", 80, false},
		{"a.svc.example.org", 1234, true},
		{"a.b.svc.example.org", 1, true},
		{"svc.example.org", 80, false}, // the wildcard is strictly below
		{"xsvc.example.org", 80, false},
		{"api.test", 443, true},
		{"api.test", 80, false},
		{"api.test", 0, true}, // DNS: any port
		{"evil.com", 443, false},
		{"example.com.evil.com", 443, false},
	} {
		if _, ok := pol.AllowName(tc.name, tc.port); ok != tc.ok {
			t.Errorf("AllowName(%q, %d) = %v, want %v", tc.name, tc.port, ok, tc.ok)
		}
	}
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"203.0.113.7", true}, {"203.0.114.1", false}, {"2001:db8::1", true}, {"2001:db8::2", false},
		{"::ffff:203.0.113.9", true},
	} {
		if _, ok := pol.AllowAddr(netip.MustParseAddr(tc.addr)); ok != tc.ok {
			t.Errorf("AllowAddr(%s) = %v, want %v", tc.addr, ok, tc.ok)
		}
	}
	open, _ := Compile(ModeOpen, nil, nil)
	if _, ok := open.AllowName("anything.example", 1); !ok {
		t.Error("open mode refused a name")
	}
	none, _ := Compile("", nil, nil)
	if _, ok := none.AllowName("example.com", 80); ok || none.Mode != ModeNone {
		t.Error("none mode allowed a name")
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		mode         string
		allow, cidrs []string
		err          string
	}{
		{"none", []string{"example.com"}, nil, "network.allow: needs network mode allowlist"},
		{"open", []string{"example.com"}, nil, "open mode"},
		{"closed", nil, nil, `network.mode "closed"`},
		{"allowlist", []string{"ok.com", "*.com"}, nil, `network.allow[1] "*.com"`},
		{"allowlist", nil, []string{"10.0.0.1/8"}, "host bits"},
		{"allowlist", nil, []string{"nope"}, `network.allow_cidr[0] "nope"`},
		{"allowlist", make([]string, MaxAllow+1), nil, "at most"},
	} {
		_, err := Compile(tc.mode, tc.allow, tc.cidrs)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Compile(%q, %q, %q) = %v; want %q", tc.mode, tc.allow, tc.cidrs, err, tc.err)
		}
	}
}

func TestGuard(t *testing.T) {
	g := NewGuard([]netip.Prefix{netip.MustParsePrefix("10.9.0.0/16"), netip.MustParsePrefix("127.0.0.0/8")},
		[]netip.Prefix{netip.MustParsePrefix("10.201.0.0/16")})
	g.SetHostAddrs([]netip.Addr{netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("10.9.0.5")})
	for _, tc := range []struct {
		addr   string
		reason string // "" = allowed
	}{
		{"8.8.8.8", ""},
		{"2606:4700::1111", ""},
		{"169.254.169.254", ReasonMetadata},
		{"fd00:ec2::254", ReasonMetadata},
		{"::ffff:169.254.169.254", ReasonMetadata},
		{"64:ff9b::a9fe:a9fe", ReasonTranslated},
		{"2002:a9fe:a9fe::1", ReasonTranslated},
		{"64:ff9b::808:808", ""},
		{"127.0.0.1", ReasonLoopback}, // an exception cannot open loopback
		{"::1", ReasonLoopback},
		{"0.0.0.0", ReasonUnspecified},
		{"10.1.2.3", ReasonPrivate},
		{"10.9.1.1", ""},         // admin exception
		{"10.9.0.5", ReasonHost}, // ...but never the host itself
		{"10.201.0.2", ReasonSandboxes},
		{"172.16.0.1", ReasonPrivate},
		{"192.168.1.1", ReasonPrivate},
		{"100.64.0.1", ReasonCGNAT},
		{"169.254.1.1", ReasonLinkLocal},
		{"fe80::1", ReasonLinkLocal},
		{"fd12::1", ReasonULA},
		{"224.0.0.1", ReasonMulticast},
		{"ff02::1", ReasonMulticast},
		{"255.255.255.255", ReasonMulticast},
		{"203.0.113.10", ReasonDocs},
		{"198.51.100.7", ReasonHost},
		{"240.0.0.1", ReasonReserved},
	} {
		reason, ok := g.Check(netip.MustParseAddr(tc.addr))
		if tc.reason == "" {
			if !ok {
				t.Errorf("Check(%s) refused (%s), want allowed", tc.addr, reason)
			}
			continue
		}
		if ok || !strings.HasPrefix(reason, tc.reason) {
			t.Errorf("Check(%s) = %q, %v; want refused as %q", tc.addr, reason, ok, tc.reason)
		}
	}
}

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com:443", "*", "*.com", "a..b", "1.2.3.4", "[::1]:1", "xn--a.b:65535", "A.B.", "*.co.uk"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			return
		}
		// The canonical form parses back to the same pattern.
		q, err := ParsePattern(p.String())
		if err != nil || q != p {
			t.Fatalf("ParsePattern(%q) = %v, but its String %q gives %v, %v", s, p, p.String(), q, err)
		}
		if p.Wild {
			if ps, _ := publicSuffixOf(p.Name); ps == p.Name {
				t.Fatalf("wildcard over public suffix accepted: %q", s)
			}
		} else if !p.Match(p.Name, p.Port) {
			t.Fatalf("%v does not match its own name", p)
		}
	})
}

func FuzzMatch(f *testing.F) {
	f.Add("*.example.com", "a.example.com", 443)
	f.Add("example.com:80", "example.com", 80)
	f.Add("*.b.example.com", "b.example.com", 0)
	f.Fuzz(func(t *testing.T, pattern, name string, port int) {
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		n, ok := NormalizeName(name)
		if !ok {
			return
		}
		if !p.Match(n, port) {
			return
		}
		// A match is the name itself, or a name strictly below the
		// wildcard's domain, on the pattern's port (or any).
		if p.Port != 0 && port != 0 && port != p.Port {
			t.Fatalf("%v matched port %d", p, port)
		}
		if p.Wild {
			if !strings.HasSuffix(n, "."+p.Name) {
				t.Fatalf("%v matched %q", p, n)
			}
		} else if n != p.Name {
			t.Fatalf("%v matched %q", p, n)
		}
	})
}

func FuzzParseCIDR(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "2001:db8::/32", "1.2.3.4", "::ffff:1.2.3.4/128", "fe80::1%eth0", "10.0.0.1/8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseCIDR(s)
		if err != nil {
			return
		}
		if p.Masked() != p || p.Addr().Zone() != "" {
			t.Fatalf("ParseCIDR(%q) = %v: not canonical", s, p)
		}
		if q, err := ParseCIDR(p.String()); err != nil || q != p {
			t.Fatalf("ParseCIDR(%q) = %v, reparse %v %v", s, p, q, err)
		}
	})
}

func publicSuffixOf(s string) (string, bool) { return publicsuffix.PublicSuffix(s) }

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		p, q string
		want bool
	}{
		{"a.example.com", "a.example.com", true},
		{"a.example.com", "a.example.com:443", true},
		{"a.example.com:443", "a.example.com:443", true},
		{"a.example.com:443", "a.example.com", false},
		{"a.example.com:443", "a.example.com:8443", false},
		{"a.example.com", "b.example.com", false},
		{"a.example.com", "*.a.example.com", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "x.a.example.com:22", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "*.a.example.com", true},
		{"*.a.example.com", "*.example.com", false},
		{"*.example.com:443", "*.a.example.com", false},
		{"*.example.com", "a.example.org", false},
	} {
		p, err1 := ParsePattern(tc.p)
		q, err2 := ParsePattern(tc.q)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s %s: %v %v", tc.p, tc.q, err1, err2)
		}
		if got := p.Covers(q); got != tc.want {
			t.Errorf("%s covers %s = %v, want %v", tc.p, tc.q, got, tc.want)
		}
	}
}

// TestDenyCIDR: open mode with deny_cidr refuses the denied ranges only,
// and its allow entries win over them (E2B's allowOut over denyOut).
func TestDenyCIDR(t *testing.T) {
	p, err := CompileDeny(ModeOpen, []string{"api.example.com"}, []string{"203.0.113.7"}, []string{"203.0.113.0/24", "2001:db8::/32", "198.51.100.9"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.DenyCIDRs(), ","); got != "203.0.113.0/24,2001:db8::/32,198.51.100.9/32" {
		t.Fatalf("DenyCIDRs = %s", got)
	}
	for _, tc := range []struct {
		name, addr string
		ok         bool
	}{
		{"", "192.0.2.1", true},                     // open: not denied
		{"", "203.0.113.8", false},                  // denied range
		{"", "::ffff:203.0.113.8", false},           // mapped form of a denied address
		{"", "2001:db8::5", false},                  // denied v6 range
		{"", "198.51.100.9", false},                 // a denied single IP
		{"", "198.51.100.10", true},                 // its neighbour
		{"", "203.0.113.7", true},                   // allow_cidr wins over the deny
		{"other.example.com", "203.0.113.8", false}, // a name does not lift a deny
		{"api.example.com", "203.0.113.8", true},    // an allowed name does
		{"other.example.com", "192.0.2.1", true},
	} {
		_, ok := p.Reach(tc.name, 443, netip.MustParseAddr(tc.addr))
		if ok != tc.ok {
			t.Errorf("Reach(%q, %s) = %v, want %v", tc.name, tc.addr, ok, tc.ok)
		}
	}
	if p.DeniedBy(netip.MustParseAddr("203.0.113.8")) != "203.0.113.0/24" || p.DeniedBy(netip.MustParseAddr("192.0.2.1")) != "" {
		t.Error("DeniedBy names the wrong entry")
	}
	// Without deny rules open mode is as before; allowlist mode is unchanged.
	open, _ := Compile(ModeOpen, nil, nil)
	if _, ok := open.Reach("", 443, netip.MustParseAddr("203.0.113.8")); !ok {
		t.Error("open mode refused an address")
	}
	al, _ := Compile(ModeAllowlist, []string{"api.example.com"}, []string{"203.0.113.0/24"})
	for _, tc := range []struct {
		name, addr string
		ok         bool
	}{
		{"", "203.0.113.8", true}, {"", "192.0.2.1", false},
		{"api.example.com", "192.0.2.1", true}, {"other.example.com", "192.0.2.1", false},
	} {
		if _, ok := al.Reach(tc.name, 443, netip.MustParseAddr(tc.addr)); ok != tc.ok {
			t.Errorf("allowlist Reach(%q, %s) = %v, want %v", tc.name, tc.addr, ok, tc.ok)
		}
	}
	none, _ := Compile(ModeNone, nil, nil)
	if _, ok := none.Reach("api.example.com", 443, netip.MustParseAddr("192.0.2.1")); ok {
		t.Error("mode none reached something")
	}
}

func TestDenyCIDRErrors(t *testing.T) {
	for _, tc := range []struct {
		mode               string
		allow, cidrs, deny []string
		want               string
	}{
		{ModeAllowlist, []string{"example.com"}, nil, []string{"10.0.0.0/8"}, "needs network mode open"},
		{ModeNone, nil, nil, []string{"10.0.0.0/8"}, "needs network mode open"},
		{ModeOpen, nil, nil, []string{"example.com"}, "deny_cidr[0]"},
		{ModeOpen, nil, nil, []string{"10.0.0.1/8"}, "host bits"},
		{ModeOpen, []string{"example.com"}, nil, nil, "open mode"},
		{ModeOpen, nil, nil, make([]string, MaxCIDRs+1), "at most"},
	} {
		_, err := CompileDeny(tc.mode, tc.allow, tc.cidrs, tc.deny)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CompileDeny(%s, %v, %v, %v) = %v, want %q", tc.mode, tc.allow, tc.cidrs, tc.deny, err, tc.want)
		}
	}
}
