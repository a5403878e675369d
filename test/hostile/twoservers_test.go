//go:build linux

package hostile

// Two servers on one host (issue 14 item 13/10, shared-resource collision
// between servers): each server's identity derives from its data
// directory and names its nftables table, interfaces, pools, egress ports
// and (unless set) its cgroup prefix, which it also locks; its start-up
// sweep touches only what carries its names.

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
)

// Two networked servers in one namespace (the host), each with a running
// sandbox, restarted in turn: after every step both sandboxes exec and
// reach api.test through their own server's egress. A third server given
// the second's cgroup prefix is refused at start (it would sweep the
// second's sandboxes as its own leftovers), and the second's sandbox lives
// on. The egress is on each server's record.
func TestTwoServersOneHost(t *testing.T) {
	l := newSrvLab(t)
	caFile := filepath.Join(t.TempDir(), "lab-ca.pem")
	must(t, os.WriteFile(caFile, l.caPEM, 0o600))
	b := startServer(t, serverOptions{network: true, ns: l.ns, addr: "127.0.0.1:7071", ownPrefix: true,
		uidBase: 13733 * 65536, extra: []string{"--listen", "0.0.0.0:7071", "--insecure-listen",
			"--dns-upstream", ipResolver + ":53", "--egress-allow-cidr", "203.0.113.0/24",
			"--egress-upstream-ca", caFile, "--net-pool-v6", "none", "--log-level", "info"}})
	if b.prefix == "" || !strings.HasPrefix(b.prefix, "paddock-") || b.prefix == l.prefix {
		t.Fatalf("the second server's cgroup prefix %q (the first's: %q)", b.prefix, l.prefix)
	}
	spec := client.Spec{Network: &client.Network{Mode: "allowlist", Allow: []string{"api.test"}}}
	a1 := l.create(spec)
	b1 := b.create(spec)

	works := func(step string) {
		t.Helper()
		for _, c := range []struct {
			name string
			s    *server
			id   string
		}{{"the first server's", l.server, a1}, {"the second server's", b, b1}} {
			res, err := c.s.c.Exec(ctxT(t, 2*time.Minute), c.id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", "echo alive; " + curlT + "http://api.test/"}})
			if err != nil || !strings.Contains(res.Stdout, "alive") || !strings.Contains(res.Stdout, "api.test:80") {
				dbg, _ := c.s.c.Exec(ctxT(t, time.Minute), c.id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", "cat /etc/resolv.conf; ip addr; ip route"}})
				nft, _ := exec.Command("nsenter", "--net=/proc/"+strconv.Itoa(c.s.cmd.Process.Pid)+"/ns/net", "sh", "-c", "nft list tables; ip addr show lo; ss -lnup; ss -lntp").CombinedOutput()
				t.Logf("sandbox: %s\nserver namespace: %s\nserver log: %s", dbg.Stdout, nft, c.s.log())
				t.Fatalf("%s: %s sandbox: exec %v, egress: %q %q\nfirst server:\n%s\nsecond server:\n%s", step, c.name, err, res.Stdout, res.Stderr,
					lastLines(l.log(), 10), lastLines(b.log(), 10))
			}
		}
		t.Logf("%s: both sandboxes exec and reach api.test", step)
	}
	works("side by side")
	l.stop()
	l.start()
	works("after the first server restarted")
	b.stop()
	b.start()
	works("after the second server restarted")

	// A third server with the second's prefix: refused at start.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(b.bin, "serve", "--data", data, "--listen", addr, "--pool", "0", "--no-network",
		"--cgroup-prefix", b.prefix, "--uid-base", strconv.Itoa(20000*65536))
	cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+b.key)
	done := make(chan []byte, 1)
	go func() { out, _ := cmd.CombinedOutput(); done <- out }()
	select {
	case out := <-done:
		if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), "another paddock server uses the cgroup prefix") {
			t.Errorf("a server sharing the second's prefix: exit %d: %s", cmd.ProcessState.ExitCode(), lastLines(string(out), 5))
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("a server sharing the second's prefix was not refused: it kept running")
	}
	works("after a server with the second's prefix was refused")
	l.stillServes(a1)
	b.stillServes(b1)
	l.netAudited(a1, true, "api.test")
}
