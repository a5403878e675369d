//go:build linux

package e2b_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

const urlsDomain = "ports.test"

// hostEcho answers every request with the Host header and the headers it
// saw, as JSON.
const hostEcho = `
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = json.dumps({"host": self.headers.get("Host"), "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// hostGet sends GET / to the server with Host host and extra headers.
func hostGet(t *testing.T, base, host string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSandboxURLs: getHost(port)'s name, PORT-ID.DOMAIN, reaches the
// sandbox's port with the traffic access token and is 401 without it;
// allowPublicTraffic opens it without one; maskRequestHost is the Host
// the server sees; envd answers on 49983-ID.DOMAIN, for that sandbox only.
func TestSandboxURLs(t *testing.T) {
	e := testenv.New(t, testenv.Options{PortsDomain: urlsDomain})
	s := &stack{Env: e, URL: e.Server.URL}
	key := s.key(t, "urls").Key
	jsonKey := map[string]string{"X-API-KEY": key, "Content-Type": "application/json"}
	st, _, body := s.do(t, "POST", "/v2/sandboxes", jsonKey, []byte(`{}`))
	var closed struct {
		created
		TrafficAccessToken string `json:"trafficAccessToken"`
		Domain             string `json:"domain"`
	}
	if st != 201 || json.Unmarshal(body, &closed) != nil || closed.Domain != urlsDomain || closed.TrafficAccessToken == "" {
		t.Fatalf("create: %d %s (want domain %s and a traffic token)", st, body, urlsDomain)
	}
	st, _, body = s.do(t, "POST", "/v2/sandboxes", jsonKey, []byte(`{"network":{"allowPublicTraffic":true,"maskRequestHost":"${PORT}-masked.example"}}`))
	var open created
	if st != 201 || json.Unmarshal(body, &open) != nil {
		t.Fatalf("create public: %d %s", st, body)
	}
	if st, _, body := s.do(t, "GET", "/sandboxes/"+open.SandboxID, jsonKey, nil); st != 200 || strings.Contains(string(body), "paddock.e2b/") {
		t.Fatalf("info shows Paddock's labels: %d %s", st, body)
	}
	sc := rights.Scope{Tenant: "urls", Rights: rights.All}
	for _, id := range []string{closed.SandboxID, open.SandboxID} {
		if _, err := s.Manager.StartProcess(context.Background(), sc, id, sandbox.ProcessRequest{Cmd: []string{"python3", "-c", hostEcho, "8080"}}); err != nil {
			t.Fatal(err)
		}
	}
	host := func(id string) string { return "8080-" + id + "." + urlsDomain }
	tokenHdr := map[string]string{"e2b-traffic-access-token": closed.TrafficAccessToken}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, _ := hostGet(t, s.URL, host(closed.SandboxID), tokenHdr)
		if st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered (last %d)", st)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Positive control: with the token, the port answers, and the token
	// does not reach the sandbox.
	st, page := hostGet(t, s.URL, host(closed.SandboxID), tokenHdr)
	if st != 200 || strings.Contains(page, closed.TrafficAccessToken) || !strings.Contains(page, `"host": "`+host(closed.SandboxID)) {
		t.Fatalf("with the token: %d %s", st, page)
	}
	// Without it (or with another sandbox's), 401 / 404.
	if st, body := hostGet(t, s.URL, host(closed.SandboxID), nil); st != 401 {
		t.Fatalf("without the token: %d %s, want 401", st, body)
	}
	if st, body := hostGet(t, s.URL, host(closed.SandboxID), map[string]string{"e2b-traffic-access-token": "pdt_forged"}); st != 401 {
		t.Fatalf("a forged token: %d %s, want 401", st, body)
	}
	if st, _ := hostGet(t, s.URL, host(open.SandboxID), tokenHdr); st != 404 {
		t.Fatalf("a token of another sandbox: %d, want 404", st)
	}
	// The public sandbox answers without a token, with its Host mask.
	deadline = time.Now().Add(20 * time.Second)
	for {
		st, page = hostGet(t, s.URL, host(open.SandboxID), nil)
		if st == 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st != 200 || !strings.Contains(page, `"host": "8080-masked.example"`) {
		t.Fatalf("public port: %d %s", st, page)
	}
	// envd on the sandbox's own host name: the host names the sandbox,
	// whatever header says otherwise.
	envdHost := "49983-" + closed.SandboxID + "." + urlsDomain
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/files?path=/etc/hostname", nil)
	req.Host = envdHost
	req.Header.Set("X-Access-Token", closed.EnvdAccessToken)
	req.Header.Set("E2b-Sandbox-Id", open.SandboxID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("envd on its host: %d", resp.StatusCode)
	}
	req.Host = "49983-" + open.SandboxID + "." + urlsDomain // closed's token, open's host
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("another sandbox's token on envd's host: %d, want 404", resp.StatusCode)
	}
	// The options are set at create only; a bad mask is refused.
	if st, _, body := s.do(t, "PUT", "/sandboxes/"+closed.SandboxID+"/network", jsonKey, []byte(`{"allowPublicTraffic":true}`)); st != 400 {
		t.Fatalf("update with allowPublicTraffic: %d %s", st, body)
	}
	if st, _, body := s.do(t, "POST", "/v2/sandboxes", jsonKey, []byte(`{"network":{"maskRequestHost":"a\r\nX-Evil: 1"}}`)); st != 400 {
		t.Fatalf("a mask with CRLF: %d %s", st, body)
	}
	if st, _, body := s.do(t, "POST", "/v2/sandboxes", jsonKey, []byte(`{"metadata":{"paddock.e2b/public-traffic":"true"}}`)); st != 400 {
		t.Fatalf("the label in metadata: %d %s", st, body)
	}
}
