//go:build linux

package tplsvc_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

const siteAddr = "203.0.113.10"

// webLab is a namespace holding the sandboxes' host side, routed to a
// second one where site.test (203.0.113.10:80) answers.
func webLab(t *testing.T) *netlab.NS {
	t.Helper()
	host, web := netlab.New(t), netlab.New(t)
	hh, wh := host.Handle(), web.Handle()
	la := netlink.NewLinkAttrs()
	la.Name, la.Flags = "tbld0", net.FlagUp
	veth := &netlink.Veth{LinkAttrs: la, PeerName: "tbld1", PeerNamespace: netlink.NsFd(web.FD)}
	if err := hh.LinkAdd(veth); err != nil {
		t.Fatalf("veth: %v", err)
	}
	netlab.AddAddr(t, hh, veth, "10.252.9.1/30")
	peer, err := wh.LinkByName("tbld1")
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.LinkSetUp(peer); err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, wh, peer, "10.252.9.2/30")
	lo, err := wh.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	netlab.AddAddr(t, wh, lo, siteAddr+"/32")
	_, dst, _ := net.ParseCIDR("203.0.113.0/24")
	if err := hh.RouteAdd(&netlink.Route{LinkIndex: veth.Attrs().Index, Dst: dst, Gw: net.ParseIP("10.252.9.2")}); err != nil {
		t.Fatal(err)
	}
	if err := wh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP("10.252.9.1")}); err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := web.Do(func() (err error) { ln, err = net.Listen("tcp4", siteAddr+":80"); return err }); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello from site") }),
		ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return host
}

// A RUN reaches the network only under --net allowlist, only to --allow
// hosts, through the egress proxy as a sandbox does: the same step that
// fetches site.test under "allowlist --allow site.test" (the positive
// control) fails under none and under an allowlist without it.
func TestTemplateBuildRunAllowlist(t *testing.T) {
	testenv.RequireRoot(t)
	host := webLab(t)
	reg := ocitest.Start(t)
	ref := reg.Ref("paddock/bb:1")
	reg.Push(t, ref, ocitest.Image(t, v1.Config{Env: []string{"PATH=/bin"}}, types.OCILayer,
		ocitest.Busybox(t, map[string]ocitest.File{"srv/": {Dir: true}})))
	e := testenv.New(t, testenv.Options{
		Templates: server.TemplatesConfig{Insecure: []string{reg.Host}, AuthFile: reg.DockerConfig(t)},
		NetworkConfig: &server.NetworkConfig{HostNS: host.Path(), PoolV6: "none", Upstreams: []netip.AddrPort{},
			Static:    map[string][]netip.Addr{"site.test": {netip.MustParseAddr(siteAddr)}, "other.test": {netip.MustParseAddr(siteAddr)}},
			AllowCIDR: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}},
	})
	s := &stack{e: e, reg: reg, ref: ref}
	a := s.tenant(t, "netbuilder", client.Quotas{})
	// Through the proxy the sandbox is given (HTTP_PROXY), with busybox nc.
	df := "FROM " + ref + "\nRUN p=${http_proxy#http://}; p=${p%/}; echo \"proxy=[$p]\"; " +
		"printf 'GET http://site.test/ HTTP/1.0\\r\\nHost: site.test\\r\\n\\r\\n' | nc -w 10 ${p%:*} ${p##*:} > /srv/page; " +
		"cat /srv/page; grep -q 'hello from site' /srv/page\n"
	dir := writeCtx(t, map[string]string{"Dockerfile": df})
	if _, evs, err := buildTpl(t, a, client.TemplateBuild{Name: "online", Network: "allowlist", Allow: []string{"site.test"}}, dir); err != nil {
		t.Fatalf("allowlisted RUN: %v (%+v)", err, evs)
	}
	sb, err := a.Create(context.Background(), client.Spec{Template: "online"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := a.Exec(context.Background(), sb.ID, client.ExecRequest{Cmd: []string{"cat", "/srv/page"}}); err != nil || !strings.Contains(r.Stdout, "hello from site") {
		t.Fatalf("the fetched page is not in the image: %v %+v", err, r)
	}
	for _, c := range []struct {
		what string
		req  client.TemplateBuild
	}{
		{"--net none", client.TemplateBuild{Name: "offline", NoCache: true}},
		{"an allowlist without site.test", client.TemplateBuild{Name: "elsewhere", Network: "allowlist", Allow: []string{"other.test"}, NoCache: true}},
	} {
		_, _, err := buildTpl(t, a, c.req, dir)
		if ce, ok := err.(*client.Error); !ok || ce.Code != "invalid_argument" || !strings.Contains(ce.Message, "exit code") {
			t.Errorf("%s: %v, want a failed step", c.what, err)
		}
	}
}
