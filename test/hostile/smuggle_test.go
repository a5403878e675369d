//go:build linux

package hostile

// Group: network egress, HTTP request smuggling (issue 14 item 4). The lab
// of network_test.go: allowed.test's server at 203.0.113.10 answers any
// virtual host it is asked for ("ALLOWED-SERVER (host NAME)"), as a
// shared server or CDN front would.

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
)

// converse sends msgs on one connection from ns to addr, reading what
// arrives for up to a second after each (what the probe's converse op
// does inside a sandbox).
func converse(t *testing.T, ns *netNS, addr string, msgs ...string) string {
	t.Helper()
	c, err := ns.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("positive control: connect to %s: %v", addr, err)
	}
	defer c.Close()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	for _, m := range msgs {
		if _, err := io.WriteString(c, m); err != nil {
			break
		}
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			_ = c.SetReadDeadline(end)
			n, err := c.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				break
			}
		}
	}
	return got.String()
}

// A request that asks for an upgrade the server does not grant (it
// answers 200), then, on the same connection, a request for a virtual host
// the policy forbids, written so that it does not look like a request to
// a relay that guesses (a lower-case method). The old relay turned opaque
// at the asking and forwarded it; the proxy now waits for a 101.
func TestNetUpgradeSmuggling(t *testing.T) {
	l := newNetLab(t)
	ask := "GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: x-smuggle\r\n\r\n"
	smuggled := "get / HTTP/1.1\r\nHost: forbidden.test\r\n\r\n"
	// Positive control: outside any sandbox the server answers the ask
	// with 200 and then serves the forbidden virtual host on the same
	// connection: what a relay that forwards the second request gets.
	got := converse(t, l.h, ipAllowed+":80", ask, smuggled)
	if !strings.Contains(got, "HTTP/1.1 200") || !strings.Contains(got, "(host forbidden.test)") {
		t.Fatalf("positive control: the server did not answer the upgrade with 200 and then serve forbidden.test:\n%s", got)
	}
	id := l.sandboxNet("allowlist", "allowed.test")
	// The in-sandbox control: the ask itself is allowed and answered.
	r, res := l.probeIn(id, "", "converse", ipAllowed+":80", strconv.Quote(ask), strconv.Quote(smuggled))
	if !strings.Contains(r.Detail, "(host allowed.test)") {
		t.Fatalf("the allowed request on the connection was not answered: %+v %s", r, res.Stderr)
	}
	if strings.Contains(r.Detail+res.Stdout, "forbidden.test") {
		t.Fatalf("the smuggled request for forbidden.test went through: %+v", r)
	}
	// The upper-case form, on a connection of its own: refused by Host.
	r, _ = l.probeIn(id, "", "converse", ipAllowed+":80", strconv.Quote(ask), strconv.Quote(strings.Replace(smuggled, "get", "GET", 1)))
	if strings.Contains(r.Detail, "forbidden.test") {
		t.Fatalf("the second request for forbidden.test went through: %+v", r)
	}
	l.stillServes(id)
	l.audited("the refused smuggled request", audit.Query{Sandbox: id, Action: "net.connect"}, func(rec audit.Record) bool {
		return bytes.Contains(rec.Args, []byte("then refused")) &&
			(bytes.Contains(rec.Args, []byte("malformed HTTP request")) || bytes.Contains(rec.Args, []byte("forbidden.test")))
	})
}
