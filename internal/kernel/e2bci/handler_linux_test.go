//go:build linux

package e2bci_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/kernel"
	"github.com/paddockhq/paddock/internal/kernel/e2bci"
	"github.com/paddockhq/paddock/internal/testenv/npmtest"
)

func needKernels(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel, pandas, matplotlib").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel, pandas and matplotlib (Debian packages): %v", err)
	}
}

// server is the handler over a real supervisor, behind a check that every
// request carries E2B's code-interpreter port header (as the SDK sends).
func server(t *testing.T) *httptest.Server {
	t.Helper()
	sup, err := kernel.New(kernel.Config{Cwd: t.TempDir(), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	h := e2bci.NewHandler(sup)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("E2b-Sandbox-Port") != "49999" {
			http.Error(w, "wrong port header", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("E2b-Sandbox-Port", "49999")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	return res, buf.Bytes()
}

func TestHandlerShapes(t *testing.T) {
	needKernels(t)
	srv := server(t)
	res, body := post(t, srv.URL+"/execute", `{"code":"print('hi')\n'x'"}`)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	var types []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		types = append(types, m["type"].(string))
		switch m["type"] {
		case "stdout":
			if m["text"] != "hi\n" || m["timestamp"] == nil {
				t.Errorf("stdout line %v", m)
			}
		case "result":
			if m["text"] != "x" || m["is_main_result"] != true {
				t.Errorf("result line %v", m)
			}
		}
	}
	if strings.Join(types, ",") != "stdout,result,number_of_executions,end_of_execution" {
		t.Errorf("line types %v", types)
	}

	for _, c := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/execute", `{"code":"1","context_id":"x","language":"python"}`, 400, "Only one of context_id or language can be provided"},
		{"/execute", `{"code":"1","context_id":"nope"}`, 404, "Context nope not found"},
		{"/execute", `{"context_id":"nope"}`, 422, `"missing"`},
		{"/execute", `{"code":`, 422, "json_invalid"},
		{"/contexts", `{"language":"cobol"}`, 400, "unknown language"},
		{"/contexts/nope/restart", ``, 404, "Context nope not found"},
	} {
		res, body := post(t, srv.URL+c.path, c.body)
		if res.StatusCode != c.status || !strings.Contains(string(body), c.want) {
			t.Errorf("POST %s %s: %d %s", c.path, c.body, res.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("DELETE", srv.URL+"/contexts/nope", nil)
	req.Header.Set("E2b-Sandbox-Port", "49999")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 404 {
		t.Errorf("DELETE unknown: %v %v", res, err)
	}
}

// sdkVersion is the @e2b/code-interpreter release the test pins (with its
// whole dependency tree, in testdata/npm/package-lock.json).
const sdkVersion = "2.8.0"

func installSDK(t *testing.T) string {
	return npmtest.Install(t, filepath.Join("testdata", "npm"), "@e2b/code-interpreter@"+sdkVersion)
}

// TestSDK runs testdata/sdk.mjs — the unmodified @e2b/code-interpreter SDK
// doing what its users do — against the handler over real kernels.
func TestSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the SDK and runs Node")
	}
	needKernels(t)
	t0 := time.Now()
	dir := installSDK(t)
	t.Logf("SDK installed in %v", time.Since(t0))
	srv := server(t)
	script, err := os.ReadFile(filepath.Join("testdata", "sdk.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "paddock-sdk-test.mjs")
	if err := os.WriteFile(run, script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "E2B_SANDBOX_URL="+srv.URL, "E2B_DOMAIN=paddock.invalid", "E2B_DEBUG=false")
	t1 := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("SDK script output (%v):\n%s", time.Since(t1), out)
	if err != nil || !strings.Contains(string(out), "ALL OK") {
		t.Fatalf("the SDK script failed: %v", err)
	}
	if n := strings.Count(string(out), "\nok ") + boolInt(strings.HasPrefix(string(out), "ok ")); n < 11 {
		t.Fatalf("only %d steps passed", n)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
