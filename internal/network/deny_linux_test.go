//go:build linux

package network_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestDenyCIDR: open mode with deny_cidr, on real addresses in the lab's
// namespaces. A destination outside the denied range is reached, one
// inside is refused (as an IP literal, by a name that resolves into it,
// through the transparent and the explicit proxy), and an allowed name
// wins over the deny. Positive control: a sandbox open without the deny
// reaches the same denied address.
func TestDenyCIDR(t *testing.T) {
	testenv.RequireRoot(t)
	l := newLab(t)
	// A public address outside the denied range.
	oh := l.out.Handle()
	lo, err := oh.LinkByName("lo")
	must(t, err)
	addAddr(t, oh, lo, "203.0.113.20/32")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from outside the deny host=%s\n", r.Host)
	}), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(l.out.Listen("tcp", "203.0.113.20:80"))
	t.Cleanup(func() { srv.Close() })

	st, dec := newStack(t, l, nil)
	open, _ := attachFake(t, st, "sb-openopenopenopenopenopenop", runtime.NetPolicy{Mode: "open"})
	deny, _ := attachFake(t, st, "sb-denydenydenydenydenydenyde", runtime.NetPolicy{Mode: "open",
		DenyCIDR: []string{"203.0.113.8/29"}, Allow: []string{"allowed.test"}})

	// Positive control: without the deny the address is reached.
	oc := open.client(t, l.certPool, false)
	if body, err := get(oc, "http://203.0.113.11/"); err != nil || !strings.Contains(body, "hello from other.test") {
		t.Fatalf("positive control: open mode did not reach 203.0.113.11: %q %v", body, err)
	}

	dc, dp := deny.client(t, l.certPool, false), deny.client(t, l.certPool, true)
	if body, err := get(dc, "http://203.0.113.20/"); err != nil || !strings.Contains(body, "outside the deny") {
		t.Errorf("an address outside deny_cidr: %q %v, want reached", body, err)
	}
	for _, c := range []struct {
		name string
		c    *http.Client
		url  string
	}{
		{"transparent, IP literal", dc, "http://203.0.113.11/"},
		{"transparent, a name into the range", dc, "http://other.test/"},
		{"explicit, IP literal", dp, "http://203.0.113.11/"},
		{"explicit, a name into the range", dp, "http://other.test/"},
	} {
		if body, err := get(c.c, c.url); err == nil || strings.Contains(body, "hello") {
			t.Errorf("%s: %s reached through deny_cidr: %q", c.name, c.url, body)
		}
	}
	// An allowed name wins over the deny, both ways.
	for _, c := range []*http.Client{dc, dp} {
		if body, err := get(c, "http://allowed.test/"); err != nil || !strings.Contains(body, "hello from allowed.test") {
			t.Errorf("allowed.test (allowed, inside deny_cidr): %q %v, want reached", body, err)
		}
	}
	// The allowed name's address does not let another name through.
	if body, err := get(dc, "http://public.test/"); err == nil || strings.Contains(body, "hello") {
		t.Errorf("public.test shares allowed.test's denied address and got through: %q", body)
	}
	// A refusal says which deny entry refused it.
	dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == deny.id && !d.Allowed && strings.Contains(d.Reason, "203.0.113.8/29")
	})
}
