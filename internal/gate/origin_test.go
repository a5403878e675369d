package gate

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"https://App.Example.com", "https://app.example.com", true},
		{"https://app.example.com:443", "https://app.example.com", true},
		{"http://app.example.com:80/", "http://app.example.com", true},
		{"http://localhost:3000", "http://localhost:3000", true},
		{"http://[::1]:8080", "http://[::1]:8080", true},
		{"null", "", false},
		{"file://", "", false},
		{"https://user@evil.com", "", false},
		{"https://a.com/path", "", false},
		{"https://a.com?q", "", false},
		{"https://a.com#f", "", false},
		{"https://a.com:99999", "", false},
		{"https://a.com:0", "", false},
		{"https://:80", "", false},
		{"javascript:alert(1)", "", false},
		{"http:opaque", "", false},
		{"https://" + strings.Repeat("a", maxOrigin), "", false},
		{"", "", false},
	} {
		got, ok := NormalizeOrigin(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		same         bool
	}{
		{"http://127.0.0.1:7070", "127.0.0.1:7070", true},
		{"https://app.example.com", "app.example.com", true},
		{"https://APP.example.com:443", "app.example.com:443", true},
		{"http://app.example.com", "app.example.com.", true},
		{"http://[::1]:7070", "[::1]:7070", true},
		// Another port is another origin, also when the Host names none
		// (it was sent to the scheme's default port).
		{"http://app.example.com:8080", "app.example.com", false},
		{"http://app.example.com:8080", "app.example.com:7070", false},
		{"https://evil.example", "paddock.corp", false},
		{"http://app.example.com.evil.example", "app.example.com", false},
		{"null", "localhost", false},
	} {
		if got := SameOrigin(tc.origin, tc.host); got != tc.same {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", tc.origin, tc.host, got, tc.same)
		}
	}
}

// The one origin rule of the WebSockets (cross-site WebSocket hijacking).
func TestCheckWebSocketOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin   string
		patterns []string
		ok       bool
	}{
		{"", nil, true}, // not a browser
		{"http://api.example.com", nil, true},
		{"https://API.example.com", nil, true},
		{"http://api.example.com:80", nil, true},
		{"http://api.example.com:8080", nil, false},
		{"https://evil.example", nil, false},
		{"null", nil, false},
		{"http://api.example.com.evil.example", nil, false},
		{"https://app.example.com", []string{"app.example.com"}, true},
		{"https://x.example.com", []string{"*.example.com"}, true},
		{"https://X.Example.com", []string{"*.EXAMPLE.com"}, true},
		{"http://app.example.com", []string{"https://app.example.com"}, false},
		{"https://app.example.com", []string{"https://app.example.com"}, true},
		{"https://app.example.com:443", []string{"https://app.example.com"}, true},
		{"::", nil, false},
	} {
		r := httptest.NewRequest("GET", "http://api.example.com/v1/sandboxes/x/pty", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if err := CheckWebSocketOrigin(r, tc.patterns); (err == nil) != tc.ok {
			t.Errorf("origin %q patterns %q: %v, want ok=%v", tc.origin, tc.patterns, err, tc.ok)
		}
	}
	if err := ValidOriginPatterns([]string{"[bad"}); err == nil {
		t.Error("a malformed pattern was accepted")
	}
}

func TestOrigins(t *testing.T) {
	o, err := NewOrigins([]string{"https://App.example.com:443", "not an origin", "http://localhost:3000"})
	if err == nil || !strings.Contains(err.Error(), "not an origin") {
		t.Fatalf("bad entry not named: %v", err)
	}
	for origin, want := range map[string]bool{"https://app.example.com": true, "http://localhost:3000": true,
		"http://app.example.com": false, "null": false, "": false} {
		if _, ok := o.Allowed(origin); ok != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, ok, want)
		}
	}
}

// FuzzOrigin: the Origin parser never panics, normalises idempotently to
// an accepted origin, and never calls a foreign name same-origin.
func FuzzOrigin(f *testing.F) {
	for _, s := range [][2]string{
		{"http://127.0.0.1:7070", "127.0.0.1:7070"}, {"https://app.example.com", "app.example.com"},
		{"null", "localhost"}, {"http://[::1]:7070", "[::1]:7070"}, {"https://evil.example:443", "paddock.corp"},
		{"http://a@b", "b"}, {"http://x/%zz", "x"}, {"", ""}, {"http://EXAMPLE.com.:80/", "example.com"},
		{"HTTP://A:80/", "a"}, {"http://x:0", "x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, origin, host string) {
		if n, ok := NormalizeOrigin(origin); ok {
			if n2, ok2 := NormalizeOrigin(n); !ok2 || n2 != n {
				t.Fatalf("NormalizeOrigin(%q) = %q, then %q, %v", origin, n, n2, ok2)
			}
		}
		if SameOrigin(origin, host) {
			oh, _ := SplitHost(strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(origin), "http://"), "https://"))
			rh, _ := SplitHost(host)
			if !strings.HasPrefix(oh, rh) {
				t.Fatalf("SameOrigin(%q, %q) with hosts %q and %q", origin, host, oh, rh)
			}
		}
		r := httptest.NewRequest("GET", "http://x/", nil)
		r.Host = host
		r.Header.Set("Origin", origin)
		_ = CheckWebSocketOrigin(r, []string{"*.example.com", "https://a.b"})
	})
}
