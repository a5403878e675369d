//go:build linux

package hostile

// The server lab: a real `paddock serve` (server_test.go) with sandbox
// networking, secret injection, exposed ports and browsers, wired as
// deployed, in a network namespace H this test makes, and an outside
// namespace O that stands in for the internet. Every packet goes to
// loopback or to addresses inside these two namespaces:
//
//	H: the server — API on every address :7070 (as a server bound to
//	   0.0.0.0), sandbox veths, nftables, egress proxy and resolver
//	  sl0 10.253.0.1/30 ──── sl1 10.253.0.2/30   O
//	O's loopback holds the destinations:
//	  203.0.113.10  api.test    HTTPS :443 and :8443, HTTP :80 and :8080
//	                             (the host that gets the secret)
//	  203.0.113.11  other.test  HTTPS :443, HTTP :80: echoes every
//	                             request header back
//	  203.0.113.53  the upstream resolver (network_test.go's)
//	  169.254.169.254  the cloud metadata service (HTTP :80)
//
// The upstream servers' certificates come from the lab's own CA, which the
// egress proxy trusts (--egress-upstream-ca) and sandboxes do not. Every
// server records every request it gets (headers, URL, body), so a test
// can tell exactly which destination ever saw a value.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

const (
	ipAPI        = ipAllowed // api.test in this lab
	ipSrvHostLab = "10.253.0.1"
	ipSrvOutLab  = "10.253.0.2"
	portsDomain  = "ports.test"
)

// srvLab is the two namespaces, the outside servers and a real server.
type srvLab struct {
	*server
	t        *testing.T
	o        *netNS
	caPEM    []byte
	resolver *recordingResolver
	seen     *requestLog
	witness  string
	// wantAuth is the Authorization api.test's "/" calls authorized.
	wantAuth atomic.Pointer[string]
}

// newSrvLab starts the lab; extra are more serve flags.
func newSrvLab(t *testing.T, extra ...string) *srvLab {
	t.Helper()
	testenvRoot(t)
	l := &srvLab{t: t, seen: &requestLog{}}
	cert := l.makeCA(t, "api.test", "other.test")
	caFile := filepath.Join(t.TempDir(), "lab-ca.pem")
	must(t, os.WriteFile(caFile, l.caPEM, 0o600))
	flags := append([]string{
		"--listen", "0.0.0.0:7070", "--insecure-listen",
		"--dns-upstream", ipResolver + ":53",
		"--egress-allow-cidr", "203.0.113.0/24",
		"--egress-upstream-ca", caFile,
		"--ports-domain", portsDomain,
		"--net-pool-v6", "none",
		// The ports the cases probe by number (ports_test.go); otherwise
		// they derive from the data directory.
		"--egress-proxy-port", "15001", "--egress-dns-port", "15053",
	}, extra...)
	l.server = startServer(t, serverOptions{network: true, extra: flags})

	h := l.ns
	l.o = newNetNS(t)
	hh, oh := h.Handle(), l.o.Handle()
	la := netlink.NewLinkAttrs()
	la.Name, la.Flags = "sl0", net.FlagUp
	veth := &netlink.Veth{LinkAttrs: la, PeerName: "sl1", PeerNamespace: netlink.NsFd(l.o.FD)}
	must(t, hh.LinkAdd(veth))
	addAddrs(t, hh, veth, ipSrvHostLab+"/30")
	peer, err := oh.LinkByName("sl1")
	must(t, err)
	must(t, oh.LinkSetUp(peer))
	addAddrs(t, oh, peer, ipSrvOutLab+"/30")
	lo, err := oh.LinkByName("lo")
	must(t, err)
	addAddrs(t, oh, lo, ipAPI+"/32", ipOther+"/32", ipResolver+"/32", ipMetadata+"/32")
	for _, dst := range []string{"203.0.113.0/24", ipMetadata + "/32"} {
		_, n, _ := net.ParseCIDR(dst)
		must(t, hh.RouteAdd(&netlink.Route{LinkIndex: veth.Attrs().Index, Dst: n, Gw: net.ParseIP(ipSrvOutLab)}))
	}
	must(t, oh.RouteAdd(&netlink.Route{LinkIndex: peer.Attrs().Index, Gw: net.ParseIP(ipSrvHostLab)}))

	l.serve(ipAPI+":443", "api.test:443", &cert)
	l.serve(ipAPI+":8443", "api.test:8443", &cert)
	l.serve(ipAPI+":80", "api.test:80", nil)
	l.serve(ipAPI+":8080", "api.test:8080", nil)
	l.serve(ipOther+":443", "other.test:443", &cert)
	l.serve(ipOther+":80", "other.test:80", nil)
	l.serve(ipMetadata+":80", "metadata", nil)
	l.resolver = startResolver(t, l.o, map[string]string{
		"api.test.": ipAPI, "other.test.": ipOther, "meta.test.": ipMetadata,
		"rebind.test.": "127.0.0.1", "rebind-host.test.": ipSrvHostLab,
	})
	l.witness = l.create(client.Spec{Labels: map[string]string{"role": "witness"}})
	return l
}

// makeCA makes the lab's CA (into l.caPEM) and a server certificate for
// names signed by it.
func (l *srvLab) makeCA(t *testing.T, names ...string) tls.Certificate {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hostile lab CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	must(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	must(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, caCert, &key.PublicKey, caKey)
	must(t, err)
	l.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}
}

// seenRequest is one request an outside server got.
type seenRequest struct {
	Server, Method, Host, URI string
	Header                    http.Header
	Body                      string
}

// requestLog is every request the outside servers got.
type requestLog struct {
	mu  sync.Mutex
	all []seenRequest
}

func (r *requestLog) add(s seenRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, s)
}

// holding lists the requests (server and method) in which value appears
// anywhere: a header of any name, the URL, the body.
func (r *requestLog) holding(value string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.all {
		var b strings.Builder
		_ = s.Header.Write(&b)
		if strings.Contains(b.String(), value) || strings.Contains(s.URI, value) || strings.Contains(s.Body, value) {
			out = append(out, s.Server+" "+s.Method+" "+s.URI)
		}
	}
	return out
}

// count is how many requests server got.
func (r *requestLog) count(server string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.all {
		if s.Server == server {
			n++
		}
	}
	return n
}

// last is the latest request server got for a URI starting with prefix.
func (r *requestLog) last(server, prefix string) (seenRequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.all) - 1; i >= 0; i-- {
		if s := r.all[i]; s.Server == server && strings.HasPrefix(s.URI, prefix) {
			return s, true
		}
	}
	return seenRequest{}, false
}

// echoHeaders writes the request's headers back, as a debugging endpoint
// (or TRACE) would.
func echoHeaders(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "%s %s %s\nHost: %s\n", r.Method, r.RequestURI, r.Proto, r.Host)
	_ = r.Header.Write(w)
}

// serve runs one outside server in O, recording everything it gets.
//
//	api.test: "/" says whether the Authorization it got is the expected
//	  one (never the header itself); "/redirect-other" and
//	  "/redirect-http" redirect to other.test and to cleartext; TRACE (in
//	  any letter case, and TRACK) echoes the request, as servers that
//	  implement it do.
//	other.test and metadata: every request's headers are echoed back.
//
// Every answer allows any origin (CORS), so that a browser page in a
// sandbox that reached a server could read its answer.
func (l *srvLab) serve(addr, name string, cert *tls.Certificate) {
	ln := l.o.Listen("tcp", addr)
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}})
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			l.seen.add(seenRequest{Server: name, Method: r.Method, Host: r.Host, URI: r.RequestURI, Header: r.Header.Clone(), Body: string(body)})
			w.Header().Set("Access-Control-Allow-Origin", "*")
			m := strings.ToUpper(r.Method)
			switch {
			case m == "TRACE" || m == "TRACK":
				echoHeaders(w, r)
			case !strings.HasPrefix(name, "api.test"):
				if name == "metadata" {
					fmt.Fprint(w, "METADATA-SECRET ")
				}
				echoHeaders(w, r)
			case r.URL.Path == "/redirect-other":
				http.Redirect(w, r, "https://other.test/after-redirect", http.StatusFound)
			case r.URL.Path == "/redirect-http":
				http.Redirect(w, r, "http://api.test/after-redirect", http.StatusFound)
			case r.URL.Path == "/page":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(w, "<!doctype html><title>%s page</title><h1>hello from %s</h1>", name, name)
			default:
				verdict := "unauthorized"
				if w := l.wantAuth.Load(); w != nil && r.Header.Get("Authorization") == *w {
					verdict = "authorized"
				}
				fmt.Fprintf(w, "%s tls=%v %s\n", name, r.TLS != nil, verdict)
			}
		})}
	go srv.Serve(ln)
	l.t.Cleanup(func() { srv.Close() })
}

// get fetches url from H (outside any sandbox) with the lab CA trusted.
func (l *srvLab) get(method, url, host string, hdr ...string) (int, string, error) {
	return nsRequest(l.ns, l.caPEM, method, url, host, hdr...)
}

// nsRequest sends one request from namespace ns (no proxy), trusting ca.
func nsRequest(ns *netNS, ca []byte, method, url, host string, hdr ...string) (int, string, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	// The lab's names, as the sandboxes' resolver answers them.
	names := map[string]string{"api.test": ipAPI, "other.test": ipOther}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h, p, err := net.SplitHostPort(addr); err == nil && names[h] != "" {
			addr = net.JoinHostPort(names[h], p)
		}
		return ns.Dial(ctx, network, addr)
	}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool}}
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, "", err
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// sh runs a shell script in sandbox id through the API (stdin optional).
func (l *srvLab) sh(id, script string, stdin ...string) client.ExecResponse {
	l.t.Helper()
	return l.shAs(l.c, id, script, stdin...)
}

// shAs is sh with another client (another tenant's key).
func (l *srvLab) shAs(c *client.Client, id, script string, stdin ...string) client.ExecResponse {
	l.t.Helper()
	req := client.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}}
	if len(stdin) > 0 {
		req.Stdin = stdin[0]
	}
	res, err := c.Exec(ctxT(l.t, 2*time.Minute), id, req)
	if err != nil {
		l.t.Fatalf("exec %s in %s: %v", clipS(script), id, err)
	}
	return res
}

// stillServes proves the server survived: /healthz answers, and a fresh
// exec works in the witness and in every sandbox given.
func (l *srvLab) stillServes(ids ...string) {
	l.t.Helper()
	code, _ := l.api("GET", "/healthz", "", nil)
	if code != http.StatusOK {
		l.t.Fatalf("after the attack /healthz answers %d", code)
	}
	l.server.stillServes(append([]string{l.witness}, ids...)...)
}

// stillServesAs is stillServes for sandboxes of another tenant (c).
func (l *srvLab) stillServesAs(c *client.Client, ids ...string) {
	l.t.Helper()
	l.stillServes()
	for _, id := range ids {
		if res := l.shAs(c, id, "echo still-alive"); res.Stdout != "still-alive\n" {
			l.t.Fatalf("after the attack a fresh exec in %s fails: %+v", id, res)
		}
	}
}

// api sends one request to the server's API from H with cred as the
// bearer (empty: none); hdr are more headers (or "Host", value).
func (l *srvLab) api(method, path, cred string, body io.Reader, hdr ...string) (int, string) {
	l.t.Helper()
	return l.apiAt("http://"+l.addr, method, path, cred, body, hdr...)
}

func (l *srvLab) apiAt(base, method, path, cred string, body io.Reader, hdr ...string) (int, string) {
	l.t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	must(l.t, err)
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: l.hc.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req.WithContext(ctx))
	if err != nil {
		l.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// as is a client of the lab's server with another credential.
func (l *srvLab) as(cred string) *client.Client {
	return client.New("http://"+l.addr, cred).WithHTTPClient(l.hc)
}

// tenantKey creates tenant name with quotas and a read/write/exec key.
func (l *srvLab) tenantKey(name string, q client.Quotas) client.CreatedKey {
	l.t.Helper()
	ctx := ctxT(l.t, time.Minute)
	if _, err := l.c.CreateTenant(ctx, name, q); err != nil {
		l.t.Fatalf("create tenant %s: %v", name, err)
	}
	k, err := l.c.CreateKey(ctx, client.KeyRequest{Tenant: name, Scopes: []client.Scope{"read", "write", "exec"}})
	if err != nil {
		l.t.Fatalf("create key: %v", err)
	}
	// The server's own cleanup sees only the admin tenant's sandboxes,
	// and sandboxes outlive their server: delete this tenant's while the
	// server still runs (cleanups run last registered first).
	l.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		kc := l.as(k.Key)
		list, err := kc.List(ctx, nil)
		if err != nil {
			l.t.Errorf("cleanup: list tenant %s's sandboxes: %v", name, err)
		}
		for _, sb := range list {
			if err := kc.Delete(ctx, sb.ID); err != nil {
				l.t.Errorf("cleanup: delete %s of tenant %s: %v", sb.ID, name, err)
			}
		}
	})
	return k
}

// records reads the server's audit log through its API (GET
// /v1/audit/export), each record checked with audit.ParseLine.
func (l *srvLab) records(q client.AuditQuery) []audit.Record {
	l.t.Helper()
	var buf bytes.Buffer
	if err := l.c.AuditExport(ctxT(l.t, time.Minute), q, &buf); err != nil {
		l.t.Fatalf("audit export: %v", err)
	}
	var out []audit.Record
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r, err := audit.ParseLine(line)
		if err != nil {
			l.t.Fatalf("audit record does not verify: %v\n%s", err, clipS(string(line)))
		}
		out = append(out, r)
	}
	return out
}

// audited asserts that the log holds a record matching q and pred, and
// returns the last one (waiting a little: results of requests, and
// connection events, are written just after the client has its answer).
func (l *srvLab) audited(what string, q client.AuditQuery, pred func(audit.Record) bool) audit.Record {
	l.t.Helper()
	var found []audit.Record
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		for _, r := range l.records(q) {
			if pred == nil || pred(r) {
				found = append(found, r)
			}
		}
		if len(found) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(found) == 0 {
		var all []string
		for _, r := range l.records(client.AuditQuery{Sandbox: q.Sandbox, Action: q.Action}) {
			if bytes.Contains(r.Args, []byte("/v1/audit/export")) || bytes.Contains(r.Result, []byte("/v1/audit/export")) {
				continue
			}
			all = append(all, fmt.Sprintf("%s/%s status=%d code=%q error=%q %s %s", r.Action, r.Phase, r.Status, r.Code, r.Error, clipS(string(r.Args)), r.Result))
		}
		if len(all) > 40 {
			all = all[len(all)-40:]
		}
		l.t.Fatalf("audit log has no record of %s (query %+v); the last records of that sandbox and action:\n%s", what, q, strings.Join(all, "\n"))
	}
	return found[len(found)-1]
}

// httpAudited asserts an API answer of status to route (its pattern,
// e.g. "/v1/sandboxes/{id}/ports/{port}/{path...}") for sandbox id.
func (l *srvLab) httpAudited(id, pattern string, status int) audit.Record {
	l.t.Helper()
	return l.audited(fmt.Sprintf("the API answer %d to %s", status, pattern), client.AuditQuery{Sandbox: id, Action: audit.ActionHTTP},
		func(r audit.Record) bool {
			return r.Phase == audit.PhaseResult && r.Status == status && bytes.Contains(r.Result, []byte(`"route":"`+pattern+`"`))
		})
}

// netAudited asserts a net.connect decision of sandbox id, allowed or
// not, whose data mentions s.
func (l *srvLab) netAudited(id string, allowed bool, s string) audit.Record {
	l.t.Helper()
	return l.audited(fmt.Sprintf("a net.connect (allowed=%v) naming %s", allowed, s), client.AuditQuery{Sandbox: id, Action: "net.connect"},
		func(r audit.Record) bool {
			return bytes.Contains(r.Args, []byte(fmt.Sprintf(`"allowed":%v`, allowed))) && bytes.Contains(r.Args, []byte(s))
		})
}

// randomMarker is a distinctive value: finding a copy of it is
// unambiguous.
func randomMarker(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// sandboxPids lists the host pids of sandbox id's processes (its cgroup
// under the server's prefix), the agent included.
func (l *srvLab) sandboxPids(id string) []int {
	l.t.Helper()
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup"))
		if err != nil || !bytes.Contains(b, []byte("/"+l.prefix+"/")) || !bytes.Contains(b, []byte(id)) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "%d", &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

// memHolding reads the writable and anonymous memory of each process
// (from the host, as root) and returns the pids in which any of values
// appears, and how many bytes it read.
func memHolding(pids []int, values ...string) (map[string][]int, int64) {
	return memHoldingIn(pids, false, values...)
}

// memHoldingIn is memHolding; with privateOnly it skips shared mappings
// (on gVisor those are the sentry's memory file, read through its
// descriptor instead: see sentryHolding).
func memHoldingIn(pids []int, privateOnly bool, values ...string) (map[string][]int, int64) {
	found := map[string][]int{}
	var total int64
	for _, pid := range pids {
		maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if err != nil {
			continue
		}
		mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
		if err != nil {
			continue
		}
		hit := map[string]bool{}
		for _, line := range strings.Split(string(maps), "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || !strings.HasPrefix(f[1], "r") || privateOnly && strings.HasSuffix(f[1], "s") {
				continue
			}
			anon := len(f) < 6 || strings.HasPrefix(f[5], "[heap") || strings.HasPrefix(f[5], "[stack") || strings.HasPrefix(f[5], "[anon")
			if !anon && f[1][1] != 'w' {
				continue // a file's read-only pages: the file search covers them
			}
			var lo, hi uint64
			if _, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); err != nil || hi-lo > 1<<30 {
				continue
			}
			buf := make([]byte, hi-lo)
			n, _ := mem.ReadAt(buf, int64(lo))
			total += int64(n)
			for _, v := range values {
				if bytes.Contains(buf[:n], []byte(v)) {
					hit[v] = true
				}
			}
		}
		mem.Close()
		for v := range hit {
			found[v] = append(found[v], pid)
		}
	}
	return found, total
}
