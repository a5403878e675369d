package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestServeSecretsAndPorts runs the real `paddock serve` (no sandbox
// network: nothing here touches the host's) to check the composition
// root's wiring of secrets and exposed ports: the CLI and REST never show
// a value, the store keeps none in the clear, a spec naming a missing
// secret is a 400 (the manager's Admission), and a sandbox port answers on
// the ports domain (the hardening allows its names).
func TestServeSecretsAndPorts(t *testing.T) {
	testenv.RequireServer(t)
	dir, err := os.MkdirTemp("", "pdksec")
	if err != nil {
		t.Fatal(err)
	}
	s := &serveProc{t: t, bin: buildBinary(t), data: filepath.Join(dir, "data"), addr: freeAddr(t),
		prefix: fmt.Sprintf("paddock-secrets-%d", os.Getpid()), key: "secrets-test-key-0123456789"}
	if err := os.MkdirAll(s.data, 0o700); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(s.bin, "serve", "--data", s.data, "--listen", s.addr, "--pool", "0", "--no-network",
		"--ports-domain", "Ports.Test", "--cgroup-prefix", s.prefix, "--uid-base", "3599958016", "--log-level", "debug")
	s.cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+s.key)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.c = client.New("http://"+s.addr, s.key)
	t.Cleanup(func() {
		ids, _ := s.c.List(context.Background(), nil)
		for _, sb := range ids {
			_ = s.c.Delete(context.Background(), sb.ID)
		}
		s.stop()
		logf.Close()
		for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer"} {
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix))
		}
		_ = os.RemoveAll(dir)
	})
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := s.c.List(ctx, nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("server did not come up:\n%s", b)
		}
	}
	const value = "ghp_compositionRootSecretValue0123456789"
	cli := func(stdin string, args ...string) (string, string, error) {
		cmd := exec.Command(s.bin, args...)
		cmd.Env = append(os.Environ(), "PADDOCK_URL=http://"+s.addr, "PADDOCK_API_KEY="+s.key)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	// The CLI: value on stdin only; ls shows names, never values.
	if out, stderr, err := cli(value+"\n", "secret", "set", "GITHUB_TOKEN"); err != nil || strings.TrimSpace(out) != "GITHUB_TOKEN" ||
		!strings.Contains(stderr, "bound to no host") {
		t.Fatalf("secret set (without --host: a warning): %v %q %q", err, out, stderr)
	}
	// Bound to the hosts it may be sent to, keeping the value.
	if out, stderr, err := cli("", "secret", "bind", "GITHUB_TOKEN", "--host", "API.github.com"); err != nil || strings.TrimSpace(out) != "GITHUB_TOKEN\tapi.github.com" {
		t.Fatalf("secret bind: %v %q %q", err, out, stderr)
	}
	if _, stderr, err := cli("", "secret", "bind", "GITHUB_TOKEN"); err == nil || !strings.Contains(stderr, "--host") {
		t.Errorf("secret bind without a host: %v %q", err, stderr)
	}
	if _, _, err := cli("", "secret", "set", "GITHUB_TOKEN", value); err == nil {
		t.Error("secret set took the value from the command line")
	}
	if _, stderr, err := cli("", "secret", "set", "EMPTY"); err == nil || !strings.Contains(stderr, "no value") {
		t.Errorf("secret set without a value: %v %q", err, stderr)
	}
	out, _, err := cli("", "secret", "ls")
	if err != nil || !strings.Contains(out, "GITHUB_TOKEN") || !strings.Contains(out, "api.github.com") || strings.Contains(out, value) {
		t.Fatalf("secret ls: %v %q", err, out)
	}
	out, _, err = cli("", "secret", "ls", "--json")
	var list []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || strings.Contains(out, value) {
		t.Fatalf("secret ls --json: %v %q", err, out)
	}
	for _, path := range []string{"/v1/secrets", "/v1/secrets/GITHUB_TOKEN"} {
		req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
		req.Header.Set("Authorization", "Bearer "+s.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), value) || strings.Contains(string(b), `"value"`) {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
	}

	// A spec naming a missing secret: 400 naming it. Naming an existing
	// one passes that check (this server has no network, hence 501).
	spec := func(secretName string) client.Spec {
		return client.Spec{Network: &client.Network{Mode: "allowlist", Allow: []string{"api.github.com"},
			Inject: []client.InjectRule{{Host: "api.github.com", Header: "Authorization", Value: "Bearer {secret:" + secretName + "}"}}}}
	}
	var ce *client.Error
	if _, err := s.c.Create(ctx, spec("NO_SUCH_SECRET")); !asClientError(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Message, "NO_SUCH_SECRET") {
		t.Errorf("a missing secret: %v", err)
	}
	if _, err := s.c.Create(ctx, spec("GITHUB_TOKEN")); !asClientError(err, &ce) || ce.Status != 501 {
		t.Errorf("an existing secret (positive control, then no network here): %v", err)
	}
	// A rule for a host the secret is not bound to: refused.
	elsewhere := spec("GITHUB_TOKEN")
	elsewhere.Network.Allow = []string{"api.github.com", "echo.example.com"}
	elsewhere.Network.Inject[0].Host = "echo.example.com"
	if _, err := s.c.Create(ctx, elsewhere); !asClientError(err, &ce) || ce.Status != 403 || !strings.Contains(ce.Message, "may be sent only to api.github.com") {
		t.Errorf("a rule for a host the secret is not bound to: %v", err)
	}
	bad := spec("GITHUB_TOKEN")
	bad.Network.Allow = []string{"example.com"}
	if _, err := s.c.Create(ctx, bad); !asClientError(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Message, "not allowed by the policy") {
		t.Errorf("an inject host the policy does not allow: %v", err)
	}

	// A port on the ports domain, in network mode none.
	sb, err := s.c.Create(ctx, client.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"python3", "-m", "http.server", "8080", "--bind", "127.0.0.1"}, Cwd: "/etc"}); err != nil {
		t.Fatal(err)
	}
	host := "8080-" + sb.ID + ".ports.test"
	var status int
	var body string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		req, _ := http.NewRequest("GET", "http://"+s.addr+"/", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+s.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if status, body = resp.StatusCode, string(b); status == 200 {
			break
		}
	}
	if status != 200 || !strings.Contains(body, "hostname") {
		t.Fatalf("the port on its host: %d %s", status, body)
	}
	u, err := s.c.PortURL(ctx, sb.ID, 8080, time.Minute)
	if err != nil || !strings.HasPrefix(u.URL, "http://"+host+":") {
		t.Errorf("port URL: %+v %v", u, err)
	}

	// Nothing holds the value in the clear: the database, the server's log.
	if _, _, err := cli("", "secret", "rm", "GITHUB_TOKEN"); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || strings.Contains(p, "/layers/") || fi.Size() > 64<<20 {
			return nil
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(value)) {
			t.Errorf("%s holds the secret in the clear", p)
		}
		return nil
	})
}

func asClientError(err error, target **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*target = e
	}
	return ok
}
