//go:build linux

package hostile

// Inherited descriptors (issue 14 item 1, the CVE-2024-21626 class): a
// server started by a parent that left descriptors open passed them to
// every guest and from there to every workload of every tenant. The
// server marks what it inherited close-on-exec first thing; the guest
// does at start and before every spawn, so a workload gets 0, 1, 2 and
// what the API asked for.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

// fdProbe, run in a shell, reports which leaked descriptors the shell
// has and tries to use each: append to 7, write to the socket on 10
// (with python3: dash redirects only descriptors 0-9), enter the
// directory on 251 and list it.
const fdProbe = `echo "FDS $(ls /proc/$$/fd | tr '\n' ' ')"
for n in 7 10 251; do [ -e /proc/$$/fd/$n ] && echo "HAS-$n"; done
(echo PWNED-BY-FD-7 >&7) 2>/dev/null && echo WROTE-7
python3 -c 'import os; os.write(10, b"PWNED-BY-FD-10"); print("WROTE-10")' 2>/dev/null
(cd /proc/$$/fd/251 && echo "ENTERED-251 $(ls)") 2>/dev/null
echo PROBE-DONE
`

// hostDescriptors are the three host resources, and what the socket's
// listener has received.
type hostDescriptors struct {
	file, dir string
	files     []*os.File // ExtraFiles: entry fd-3
	sock      *os.File   // the socket's client end, as handed over
	mu        sync.Mutex
	got       bytes.Buffer
	conns     int
}

func newHostDescriptors(t *testing.T) *hostDescriptors {
	t.Helper()
	h := &hostDescriptors{}
	base := t.TempDir()
	h.file = filepath.Join(base, "root-only")
	must(t, os.WriteFile(h.file, []byte("ORIGINAL\n"), 0o600))
	h.dir = filepath.Join(base, "host-dir")
	must(t, os.Mkdir(h.dir, 0o700))
	must(t, os.WriteFile(filepath.Join(h.dir, "HOST-DIR-MARKER"), nil, 0o600))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(base, "host.sock"), Net: "unix"})
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns++
			h.mu.Unlock()
			go func() {
				b := make([]byte, 4096)
				for {
					n, err := c.Read(b)
					h.mu.Lock()
					h.got.Write(b[:n])
					h.mu.Unlock()
					if err != nil {
						c.Close()
						return
					}
				}
			}()
		}
	}()
	conn, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	h.sock, err = conn.File()
	must(t, err)
	f, err := os.OpenFile(h.file, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	d, err := os.Open(h.dir)
	must(t, err)
	h.files = make([]*os.File, 251-3+1)
	h.files[7-3], h.files[10-3], h.files[251-3] = f, h.sock, d
	t.Cleanup(func() { f.Close(); d.Close(); h.sock.Close() })
	return h
}

func (h *hostDescriptors) received() (string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got.String(), h.conns
}

// reached lists what of the host a probe's output says it reached.
func probeReached(out string) []string {
	var hits []string
	for _, w := range []string{"HAS-7", "HAS-10", "HAS-251", "WROTE-7", "WROTE-10", "ENTERED-251", "HOST-DIR-MARKER"} {
		if strings.Contains(out, w) {
			hits = append(hits, w)
		}
	}
	return hits
}

// heldBy lists the descriptors of pid that are one of the host's three
// resources (compared by device and inode, from the host).
func (h *hostDescriptors) heldBy(pid int) []string {
	want := map[string]os.FileInfo{}
	for name, p := range map[string]string{"the root-only file": h.file, "the host directory": h.dir} {
		if fi, err := os.Stat(p); err == nil {
			want[name] = fi
		}
	}
	if fi, err := h.sock.Stat(); err == nil {
		want["the host socket"] = fi
	}
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	var held []string
	for _, e := range ents {
		fi, err := os.Stat(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if err != nil {
			continue
		}
		for name, w := range want {
			if os.SameFile(fi, w) {
				held = append(held, fmt.Sprintf("fd %s is %s", e.Name(), name))
			}
		}
	}
	return held
}

// The attack: the real server started with the three host resources on
// descriptors 7, 10 and 251. Positive control: a shell the harness starts
// the same way (without Paddock) sees all three, appends to the file,
// writes to the socket and lists the directory. Then no workload of any
// kind — an exec, a background process, a terminal, the browser — nor
// the guest holds any of them (every process of the sandbox, checked from
// the host), and the probes reach none of them; the host file and socket
// got nothing. The server still serves; the workloads are on the record.
func TestInheritedDescriptors(t *testing.T) {
	testenvRoot(t)
	h := newHostDescriptors(t)

	ctl := exec.Command("/bin/sh", "-c", fdProbe)
	ctl.ExtraFiles = h.files
	out, err := ctl.CombinedOutput()
	must(t, err)
	for _, w := range []string{"HAS-7", "HAS-10", "HAS-251", "WROTE-7", "WROTE-10", "HOST-DIR-MARKER"} {
		if !strings.Contains(string(out), w) {
			t.Fatalf("positive control: a child started the same way without Paddock lacks %s:\n%s", w, out)
		}
	}
	b, _ := os.ReadFile(h.file)
	if !strings.Contains(string(b), "PWNED-BY-FD-7") {
		t.Fatalf("positive control: the control's append is not in the host file: %q", b)
	}
	if !waitFor(5*time.Second, func() bool { got, _ := h.received(); return strings.Contains(got, "PWNED-BY-FD-10") }) {
		t.Fatal("positive control: the control's write did not reach the host socket")
	}
	baseFile := string(b)
	baseSock, baseConns := h.received()

	s := startServer(t, serverOptions{files: h.files})
	withBrowser := true
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		withBrowser = false
		t.Log("no chromium: the browser's descriptors are not checked")
	}
	ctx := ctxT(t, 3*time.Minute)
	sb, err := s.c.Create(ctx, client.Spec{Browser: withBrowser, TimeoutS: 900})
	if err != nil {
		t.Fatalf("create: %v\n%s", err, s.log())
	}
	id := sb.ID

	// Every kind of workload, each running the probe.
	probes := map[string]string{}
	res, err := s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", fdProbe}})
	must(t, err)
	probes["an exec"] = res.Stdout + res.Stderr
	res, err = s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c", fdProbe}, User: "user"})
	must(t, err)
	probes["an exec as user"] = res.Stdout + res.Stderr
	// (Its output through the process API: a redirection in the shell
	// would have dash keep copies of 1 and 2 on 10 and 11.)
	bg, err := s.c.StartProcess(ctx, id, client.ProcessRequest{Cmd: []string{"/bin/sh", "-c", fdProbe + "exec sleep 600"}})
	must(t, err)
	term, err := s.c.Terminal(ctx, id, client.TerminalOptions{Cmd: []string{"/bin/sh", "-c", fdProbe + "sleep 600"}})
	must(t, err)
	defer term.Close()
	var termOut bytes.Buffer
	termDone := make(chan struct{})
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := term.Read(b)
			termOut.Write(b[:n])
			if err != nil || strings.Contains(termOut.String(), "PROBE-DONE") {
				close(termDone)
				return
			}
		}
	}()
	select {
	case <-termDone:
	case <-time.After(time.Minute):
		t.Fatalf("the terminal's probe did not finish: %q", termOut.String())
	}
	probes["a terminal"] = termOut.String()
	if !waitFor(20*time.Second, func() bool {
		var out bytes.Buffer
		_, err := s.c.ProcessOutput(ctx, id, client.ProcessRef(bg.ID), client.OutputOptions{}, func(ev client.OutputEvent) error {
			out.Write(ev.Data)
			return nil
		})
		probes["a background process"] = out.String()
		return err == nil && strings.Contains(out.String(), "PROBE-DONE")
	}) {
		t.Fatalf("the background probe did not finish: %q", probes["a background process"])
	}
	if withBrowser {
		if _, err := s.c.BrowserNavigate(ctx, id, client.NavigateRequest{URL: "about:blank", TimeoutMs: 60000}); err != nil {
			t.Fatalf("the browser does not start: %v", err)
		}
	}
	for what, out := range probes {
		if !strings.Contains(out, "PROBE-DONE") {
			t.Errorf("%s: the probe did not run: %q", what, clipS(out))
		}
		if hits := probeReached(out); len(hits) > 0 {
			t.Errorf("%s REACHED the host through inherited descriptors: %v\n%s", what, hits, clipS(out))
		} else {
			t.Logf("%s: %s", what, strings.SplitN(out, "\n", 2)[0])
		}
	}

	// From the host: no process of the sandbox — the guest, the shells,
	// sleep, the terminal, Chromium and its helpers — holds any of them.
	pids := sandboxPidsOf(s.prefix, id)
	if len(pids) < 3 {
		t.Fatalf("found only %d processes of the sandbox", len(pids))
	}
	var names []string
	for _, pid := range pids {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		names = append(names, strings.TrimSpace(string(comm)))
		if held := h.heldBy(pid); len(held) > 0 {
			t.Errorf("sandbox process %d (%s) holds host resources: %v", pid, strings.TrimSpace(string(comm)), held)
		}
	}
	t.Logf("checked %d processes of the sandbox: %s", len(pids), strings.Join(names, " "))
	if withBrowser && onGVisor(t) {
		// The host sees only the sentry and its stubs (checked above:
		// they hold nothing); the browser's processes are gVisor's
		// tasks, checked from inside: each one's descriptors 7, 10, 251.
		res, err := s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"/bin/sh", "-c",
			`for p in /proc/[0-9]*; do case "$(cat $p/comm 2>/dev/null)" in chrom*) echo "CHROME $p"; for n in 7 10 251; do [ -e $p/fd/$n ] && echo "HAS-$n $(readlink $p/fd/$n)"; done;; esac; done; true`}})
		must(t, err)
		if !strings.Contains(res.Stdout, "CHROME") {
			t.Errorf("the browser's processes were not found in the sandbox: %q", res.Stdout)
		}
		if hits := probeReached(res.Stdout); len(hits) > 0 {
			t.Errorf("the browser's processes hold host descriptors: %v\n%s", hits, clipS(res.Stdout))
		}
	} else if withBrowser && !strings.Contains(strings.Join(names, " "), "chrom") {
		t.Errorf("the browser's processes were not among those checked: %v", names)
	}
	// The server itself still has them (it never closes what it did not
	// open), only marked close-on-exec.
	if held := h.heldBy(s.cmd.Process.Pid); len(held) != 3 {
		t.Logf("the server holds %v", held)
	}

	if b, _ := os.ReadFile(h.file); string(b) != baseFile {
		t.Errorf("the root-only host file changed: %q", b)
	}
	if got, conns := h.received(); got != baseSock || conns != baseConns {
		t.Errorf("the host socket got %q (%d connections; before: %q, %d)", got, conns, baseSock, baseConns)
	}
	s.stillServes(id)
	var buf bytes.Buffer
	must(t, s.c.AuditExport(context.Background(), client.AuditQuery{Sandbox: id, Action: "process.start"}, &buf))
	if n := bytes.Count(buf.Bytes(), []byte(`"action":"process.start"`)); n == 0 {
		t.Errorf("the background process is not on the record")
	}
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if _, err := audit.ParseLine(line); err != nil {
			t.Fatalf("audit record does not verify: %v", err)
		}
	}
}

// sandboxPidsOf lists the host pids in sandbox id's cgroup under prefix.
func sandboxPidsOf(prefix, id string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup"))
		if err != nil || !bytes.Contains(b, []byte("/"+prefix+"/")) || !bytes.Contains(b, []byte(id)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}
