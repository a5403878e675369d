package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// nodeServer is a small, fast HTTP server (Node, from the host's /usr),
// so that the proxy's cost is not lost in the server's.
const nodeServer = `require("http").createServer((q, s) => { s.setHeader("Content-Length", "2"); s.end("ok"); }).listen(+process.argv[1], "127.0.0.1");`

// BenchmarkPortProxy measures what the port proxy adds to a request on a
// kept-alive connection: "direct" is an HTTP client on a connection the
// host made into the sandbox's namespace (no proxy), "proxy" goes through
// the API (key check, tenant policy, forwarding), "proxy+audit" also
// writes the two audit records every API request gets. p50/p99 are
// reported per request.
//
//	go test -run XXX -bench PortProxy -benchtime 2000x ./internal/api/
func BenchmarkPortProxy(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("needs node for a fast server in the sandbox")
	}
	e := testenv.New(b, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{})
	if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"node", "-e", nodeServer, "8080"}}); err != nil {
		b.Fatal(err)
	}
	target, err := e.Manager.ExposePort(ctx, e.Scope, sb.ID, 8080)
	if err != nil {
		b.Fatal(err)
	}
	var conn net.Conn
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if conn, err = target.Dial(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the server in the sandbox never listened: %v", err)
		}
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	direct := func() error {
		if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	viaAPI := func(o api.Options) func() error {
		o.Manager, o.Auth = e.Manager, e.Auth
		srv := httptestServer(b, api.New(o).Handler())
		req, _ := http.NewRequest(http.MethodGet, srv+"/v1/sandboxes/"+sb.ID+"/ports/8080/", nil)
		req.Header.Set("Authorization", "Bearer "+e.AdminKey)
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		return func() error {
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	}
	rec := audit.NewRecorder(e.AuditLog(), audit.RecorderOptions{RequestID: api.RequestID})
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"direct", direct},
		{"proxy", viaAPI(api.Options{})},
		{"proxy+audit", viaAPI(api.Options{Auditor: rec})},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range 50 { // warm: connections, caches
				if err := c.do(); err != nil {
					b.Fatal(err)
				}
			}
			d := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if err := c.do(); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			b.ReportMetric(float64(d[len(d)/2])/1e6, "p50_ms")
			b.ReportMetric(float64(d[len(d)*99/100])/1e6, "p99_ms")
		})
	}
}

func httptestServer(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
