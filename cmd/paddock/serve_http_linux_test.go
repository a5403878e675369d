//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestServeHardening runs the real `paddock serve` with short timeouts and
// checks that its flags reach the HTTP server: a slowloris client is cut
// off while ordinary requests are served; a stalled body is cut off; an
// oversized header answers 431; foreign Host and cross-site Origin are
// refused while --allowed-host works; the token secret is created 0600.
func TestServeHardening(t *testing.T) {
	testenv.RequireServer(t)
	bin := filepath.Join(t.TempDir(), "paddock")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir, err := os.MkdirTemp("", "pdkh")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	key := auth.NewKey()
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", addr, "--pool", "0",
		"--cgroup-prefix", fmt.Sprintf("paddock-htest-%d", os.Getpid()), "--uid-base", "400007936",
		"--read-header-timeout", "2s", "--body-idle-timeout", "1s", "--allowed-host", "paddock.test")
	cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+key)
	logf, _ := os.Create(filepath.Join(dir, "server.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _, _ = cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Logf("server log:\n%s", b)
		}
	}()
	c := client.New("http://"+addr, key)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.List(context.Background(), nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("server did not come up:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := os.Stat(filepath.Join(data, auth.SecretFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token secret: %v %v", st, err)
	}

	status := func(host, origin string, hdr ...string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/sandboxes", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"own address", "", "", 200},
		{"--allowed-host", "paddock.test:7070", "", 200},
		{"foreign host", "evil.example", "", 403},
		{"same origin", "", "http://" + addr, 200},
		{"cross-site origin", "", "https://evil.example", 403},
	} {
		if got := status(tc.host, tc.origin); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := status("", "", "X-Big", strings.Repeat("a", 100<<10)); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("100 KiB header: %d, want 431", got)
	}

	// Slowloris: a byte a second; the header timeout is 2 s.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	cut := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, slow); close(cut) }()
	go func() {
		for _, b := range []byte("GET /v1/sandboxes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + strings.Repeat("s", 40) + "\r\n\r\n") {
			if _, err := slow.Write([]byte{b}); err != nil {
				return
			}
			select {
			case <-cut:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	// A stalled body: 10 of 100 bytes, then nothing; the idle limit is 1 s.
	stall, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stall.Close()
	fmt.Fprintf(stall, "POST /v1/sandboxes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 100\r\n\r\n{\"cpu\":1,", key)
	stallDone := make(chan struct{})
	go func() {
		br := bufio.NewReader(stall)
		if resp, err := http.ReadResponse(br, nil); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode == http.StatusCreated {
				t.Error("a stalled body created a sandbox")
			}
		}
		_, _ = io.Copy(io.Discard, br)
		close(stallDone)
	}()
	for i := 0; i < 5; i++ { // ordinary requests keep being served
		if got := status("", ""); got != 200 {
			t.Fatalf("ordinary request %d during the attack: %d", i, got)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for what, ch := range map[string]chan struct{}{"slowloris client": cut, "stalled body": stallDone} {
		select {
		case <-ch:
		case <-time.After(30 * time.Second): // the slow header alone would take 60 s
			t.Fatalf("the %s was not cut off", what)
		}
	}
	if got := status("", ""); got != 200 {
		t.Fatalf("after the attack: %d", got)
	}
}
