//go:build linux

package network_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/internal/network"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
)

// works checks that sandbox f reaches allowed.test transparently, through
// the explicit proxy its setup names, and resolves names.
func works(t *testing.T, who string, f *fakeSandbox, setup runtime.NetSetup) {
	t.Helper()
	c, err := f.ns.dial("tcp", "203.0.113.10:80", 3*time.Second)
	if err != nil {
		t.Fatalf("%s: transparent connect: %v", who, err)
	}
	io.WriteString(c, "GET / HTTP/1.0\r\nHost: allowed.test\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	body, err := io.ReadAll(c)
	c.Close()
	if !strings.Contains(string(body), "hello from allowed.test") {
		t.Fatalf("%s: transparent fetch: %q %v", who, body, err)
	}
	pu, err := url.Parse(setup.Env["HTTP_PROXY"])
	if err != nil || pu.Host == "" {
		t.Fatalf("%s: setup without a proxy: %+v", who, setup)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return f.ns.dial(network, addr, 3*time.Second)
		}}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://allowed.test/")
	if err != nil {
		t.Fatalf("%s: explicit proxy %s: %v", who, pu.Host, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: explicit proxy answered %d", who, resp.StatusCode)
	}
	if m, err := f.resolve("allowed.test", dns.TypeA); err != nil || len(m.Answer) != 1 {
		t.Fatalf("%s: resolve: %v %v", who, m, err)
	}
}

func tables(t *testing.T, l *lab) map[string]bool {
	t.Helper()
	c, err := nftables.New(nftables.WithNetNSFd(l.host.FD))
	must(t, err)
	ts, err := c.ListTablesOfFamily(nftables.TableFamilyINet)
	must(t, err)
	out := map[string]bool{}
	for _, x := range ts {
		out[x.Name] = true
	}
	return out
}

// Two servers on one host (issue 14 item 13). The control: two without
// an identity cannot both have networking (the second's egress cannot
// bind the ports the first holds on every address). With identities both
// work side by side, neither listens on wildcard addresses, and a sweep
// by one leaves the other's interfaces and table alone.
func TestTwoInstancesOneHost(t *testing.T) {
	testenv.RequireRoot(t)
	l := newLab(t)
	ctx := context.Background()

	// Positive control.
	first, _ := newStack(t, l, nil)
	db, err := store.Open(t.TempDir(), network.Migrations...)
	must(t, err)
	defer db.Close()
	if second, err := network.New(ctx, l.stackOptions(db)); err == nil {
		second.Close()
		t.Fatal("positive control: a second server without an identity got its own egress")
	} else {
		t.Logf("control: the second server without an identity: %v", err)
	}
	first.Close()

	idA, idB := network.InstanceID("/srv/paddock-a"), network.InstanceID("/srv/paddock-b")
	if idA == idB || idA != network.InstanceID("/srv/paddock-a/") {
		t.Fatalf("instance ids: %s %s", idA, idB)
	}
	A, _ := newStack(t, l, func(o *network.Options) { o.Instance = idA })
	B, _ := newStack(t, l, func(o *network.Options) { o.Instance = idB })
	pa, pb := A.Plan(), B.Plan()
	if pa.V4.Overlaps(pb.V4) || pa.V6.Overlaps(pb.V6) || strings.HasPrefix(pa.Prefix, pb.Prefix) || strings.HasPrefix(pb.Prefix, pa.Prefix) {
		t.Fatalf("the instances share names or addresses: %+v %+v", pa, pb)
	}
	t.Logf("A: %s %s %s; B: %s %s %s", pa.V4, pa.V6, pa.Prefix, pb.V4, pb.V6, pb.Prefix)
	sa, setupA := attachFake(t, A, "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", allowlist)
	sb, setupB := attachFake(t, B, "sb-bbbbbbbbbbbbbbbbbbbbbbbbbb", allowlist)
	works(t, "A", sa, setupA)
	works(t, "B", sb, setupB)

	// Neither egress listens on a wildcard address: from the host side,
	// its ports answer nowhere but on its own address.
	for who, s := range map[string]runtime.NetSetup{"A": setupA, "B": setupB} {
		pu, _ := url.Parse(s.Env["HTTP_PROXY"])
		_, port, _ := net.SplitHostPort(pu.Host)
		if c, err := l.host.dial("tcp", net.JoinHostPort("127.0.0.1", port), time.Second); err == nil {
			c.Close()
			t.Fatalf("%s's proxy answers on 127.0.0.1:%s: it listens on a wildcard address", who, port)
		}
	}

	// A sweep by A (nothing to keep) removes A's own interface only.
	n, err := A.Sweep(ctx, map[string]bool{})
	if err != nil || n != 1 {
		t.Fatalf("A's sweep: %d %v", n, err)
	}
	hh := l.host.Handle()
	if _, err := hh.LinkByName(sa.slot.IfName); !errors.As(err, new(netlink.LinkNotFoundError)) {
		t.Fatalf("A's interface %s survived A's sweep: %v", sa.slot.IfName, err)
	}
	if _, err := hh.LinkByName(sb.slot.IfName); err != nil {
		t.Fatalf("A's sweep removed B's interface %s: %v", sb.slot.IfName, err)
	}
	works(t, "B after A's sweep", sb, setupB)
	// A stops (idle: its table and address go); B's stay and work.
	before := tables(t, l)
	A.Close()
	after := tables(t, l)
	if len(after) != len(before)-1 {
		t.Fatalf("tables before A stopped %v, after %v", before, after)
	}
	works(t, "B after A stopped", sb, setupB)
	if _, ok := B.Attachment(sb.id); !ok {
		t.Fatal("B lost its attachment")
	}
	// A starts again with the same identity: the same pool, and B goes on.
	db2, err := store.Open(t.TempDir(), network.Migrations...)
	must(t, err)
	defer db2.Close()
	o := l.stackOptions(db2)
	o.Instance = idA
	A2, err := network.New(ctx, o)
	if err != nil {
		t.Fatalf("A again: %v", err)
	}
	defer A2.Close()
	if A2.Plan().V4.Overlaps(pb.V4) {
		t.Fatalf("A's new start took B's pool %s", pb.V4)
	}
	works(t, "B after A restarted", sb, setupB)
}
