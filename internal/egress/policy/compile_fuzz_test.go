package policy

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzCompile: a whole network policy as a caller sends it (mode, allow
// entries, CIDRs, deny CIDRs). Compile never panics; a compiled policy's canonical
// entries compile again to the same policy, and an allowlist allows an
// address exactly when one of its CIDRs contains it (the always-refused
// ranges are the guard's job, applied to every mode).
func FuzzCompile(f *testing.F) {
	for _, c := range [][4]string{
		{"allowlist", "api.github.com\n*.pypi.org:443", "203.0.113.0/24"},
		{"allowlist", "*.com", ""}, {"allowlist", "*", ""}, {"allowlist", "*.github.io", ""},
		{"open", "", ""}, {"none", "", ""}, {"", "", ""}, {"none", "x.com", ""},
		{"allowlist", "", "10.0.0.1/8\n::1\n0.0.0.0/0"}, {"allowlist", "EXAMPLE.com.\nexample.com:99999", ""},
		{"allowlist", "xn--bcher-kva.example\nbücher.example", "2001:db8::/32"}, {"bogus", "", ""},
		{"open", "api.example.com", "203.0.113.7", "203.0.113.0/24\n::/0"}, {"open", "", "", "10.0.0.0/8"},
		{"allowlist", "", "", "10.0.0.0/8"}, {"open", "", "", "example.com"},
	} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	f.Fuzz(func(t *testing.T, mode, allow, cidrs, deny string) {
		p, err := CompileDeny(mode, split(allow), split(cidrs), split(deny))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if p.Mode != ModeNone && p.Mode != ModeAllowlist && p.Mode != ModeOpen {
			t.Fatalf("compiled mode %q", p.Mode)
		}
		q, err := CompileDeny(p.Mode, p.Allow(), p.CIDRs(), p.DenyCIDRs())
		if err != nil {
			t.Fatalf("canonical entries %v %v %v refused: %v", p.Allow(), p.CIDRs(), p.DenyCIDRs(), err)
		}
		if strings.Join(q.DenyCIDRs(), ",") != strings.Join(p.DenyCIDRs(), ",") {
			t.Fatalf("deny not canonical: %v → %v", p.DenyCIDRs(), q.DenyCIDRs())
		}
		if strings.Join(q.Allow(), ",") != strings.Join(p.Allow(), ",") || strings.Join(q.CIDRs(), ",") != strings.Join(p.CIDRs(), ",") {
			t.Fatalf("not canonical: %v %v → %v %v", p.Allow(), p.CIDRs(), q.Allow(), q.CIDRs())
		}
		if p.Mode != ModeAllowlist {
			return
		}
		for _, s := range []string{"127.0.0.1", "::1", "0.0.0.0", "203.0.113.7", "10.1.2.3", "::ffff:10.1.2.3", "2001:db8::1"} {
			a := netip.MustParseAddr(s)
			_, ok := p.AllowAddr(a)
			in := false
			for _, c := range p.CIDRs() {
				if pre, err := netip.ParsePrefix(c); err == nil && pre.Contains(a.Unmap()) {
					in = true
				} else if ad, err := netip.ParseAddr(c); err == nil && ad == a.Unmap() {
					in = true
				}
			}
			if ok != in {
				t.Fatalf("policy %v: AllowAddr(%s) = %v, its CIDRs say %v", p.CIDRs(), s, ok, in)
			}
		}
	})
}
