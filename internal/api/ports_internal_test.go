package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestParsePort(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "80": 80, "65535": 65535, "0": 0, "65536": 0, "08080": 0, "-1": 0, "+1": 0,
		"": 0, "1e3": 0, "999999": 0, " 80": 0} {
		if got, ok := parsePort(in); got != want && ok || !ok && want != 0 {
			t.Errorf("parsePort(%q) = %d %v, want %d", in, got, ok, want)
		}
	}
	for in, want := range map[string]string{
		"/v1/sandboxes/sb-x/ports/80/":        "/",
		"/v1/sandboxes/sb-x/ports/80/a/b%2Fc": "/a/b%2Fc",
		"/v1/sandboxes/sb-x/ports/80":         "/",
	} {
		if got := portRest(in); got != want {
			t.Errorf("portRest(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPortParsing: a port is accepted only in its canonical form, and
// stripping credentials removes every copy of Paddock's token and cookie
// while keeping everything else of the query and the cookies.
func FuzzPortParsing(f *testing.F) {
	f.Add("8080", "a=1&paddock_token=pdt_x&b=2", "app=1; paddock_port=pdt_y; __Host-paddock_port=z")
	f.Add("0", "paddock%5Ftoken=pdt_x", "paddock_port")
	f.Add("65536", "paddock_token&&paddock_token=1;x", ";;; =; paddock_port=1")
	f.Fuzz(func(t *testing.T, port, rawQuery, cookie string) {
		if n, ok := parsePort(port); ok && (n < 1 || n > 65535 || strconv.Itoa(n) != port) {
			t.Fatalf("parsePort(%q) = %d", port, n)
		}
		r := &http.Request{URL: &url.URL{Path: "/", RawQuery: rawQuery}, Header: http.Header{}}
		if cookie != "" {
			r.Header.Set("Cookie", cookie)
		}
		r.Header.Set("Authorization", "Bearer pdk_x")
		stripPortCredentials(r, true)
		if r.Header.Get("Authorization") != "" {
			t.Fatal("Authorization kept")
		}
		if q, err := url.ParseQuery(r.URL.RawQuery); err == nil && q.Has(PortTokenParam) {
			t.Fatalf("%q → %q still has the token", rawQuery, r.URL.RawQuery)
		}
		for _, kv := range strings.Split(r.URL.RawQuery, "&") {
			k, _, _ := strings.Cut(kv, "=")
			if uk, err := url.QueryUnescape(k); k == PortTokenParam || err == nil && uk == PortTokenParam {
				t.Fatalf("%q → %q still has the token", rawQuery, r.URL.RawQuery)
			}
			if kv != "" && !strings.Contains(rawQuery, kv) {
				t.Fatalf("%q → %q changed a parameter", rawQuery, r.URL.RawQuery)
			}
		}
		for _, c := range (&http.Request{Header: r.Header}).Cookies() {
			if c.Name == portCookie || c.Name == portCookieSecure {
				t.Fatalf("%q → %q still has the port cookie", cookie, r.Header.Get("Cookie"))
			}
		}
	})
}
