//go:build linux

package tplsvc_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/localtar"
)

// writeCtx writes files into a fresh context directory.
func writeCtx(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// buildCtx is dir as the tar `paddock template build` sends.
func buildCtx(t *testing.T, dir string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	if err := localtar.Write(&buf, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func buildTpl(t *testing.T, c *client.Client, req client.TemplateBuild, dir string) (client.Template, []client.TemplateEvent, error) {
	t.Helper()
	buf := buildCtx(t, dir)
	var evs []client.TemplateEvent
	tpl, err := c.BuildTemplate(context.Background(), req, buf, int64(buf.Len()), func(e client.TemplateEvent) { evs = append(evs, e) })
	return tpl, evs, err
}

// RUN through REST runs in a Paddock sandbox over the layers so far: a
// multi-stage build with FROM (a template and a local-registry image),
// RUN, COPY, ENV, WORKDIR, USER and COPY --from; a sandbox of the result
// sees what the RUN steps wrote and not what they deleted; the steps ran
// under seccomp and no_new_privs as root of a user namespace.
func TestTemplateBuildRun(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	a := s.tenant(t, "runner", client.Quotas{})
	if _, err := a.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "bb"}, nil); err != nil {
		t.Fatal(err)
	}
	df := "FROM bb AS src\nRUN echo from-src > /srv/src.txt\n" +
		"FROM " + s.ref + "\nENV GREETING=hi\nWORKDIR /app\n" +
		// A directory replaced in a later step: an opaque one in its layer.
		"RUN mkdir sub && echo old > sub/o\nRUN rm -rf sub && mkdir sub && echo new > sub/n\n" +
		"RUN echo \"$GREETING\" > made.txt && rm /srv/hello && grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status > posture.txt && cat /proc/self/uid_map > uidmap.txt && " +
		"ls -ldn / > rootdir.txt && mkdir /newtop && echo x > /newtop/f && echo y > /new.txt && " +
		"{ true 2>/dev/null >> /proc/sys/kernel/shmmax && echo opened || echo refused; } > proc.txt\n" +
		"COPY hello.txt ./\nCOPY --from=src /srv/src.txt ./\nUSER 1000\nRUN id -u > /tmp/uid.txt\n"
	dir := writeCtx(t, map[string]string{"Dockerfile": df, "hello.txt": "built\n"})
	tpl, evs, err := buildTpl(t, a, client.TemplateBuild{Name: "ran"}, dir)
	if err != nil {
		t.Fatalf("build: %v (events %+v)", err, evs)
	}
	if tpl.Name != "ran" {
		t.Fatalf("built %+v", tpl)
	}
	sb, err := a.Create(ctx, client.Spec{Template: "ran"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Exec(ctx, sb.ID, client.ExecRequest{User: "root", Cmd: []string{"sh", "-c",
		"pwd; cat made.txt hello.txt src.txt /tmp/uid.txt; test -e /srv/hello || echo deleted; cat posture.txt; ls sub"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "/app\nhi\nbuilt\nfrom-src\n1000\ndeleted\nNoNewPrivs:\t1\nSeccomp:\t2\nn\n"
	if res.Stdout != want {
		t.Fatalf("exec: %q (stderr %q), want %q", res.Stdout, res.Stderr, want)
	}
	// Root of the step was not the host's root: its uid 0 maps to an
	// unprivileged host uid.
	um, err := a.Exec(ctx, sb.ID, client.ExecRequest{User: "root", Cmd: []string{"cat", "/app/uidmap.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(um.Stdout); len(f) < 3 || f[0] != "0" || f[1] == "0" {
		t.Fatalf("the RUN's uid map %q: its root is the host's", um.Stdout)
	}
	// Landlock grants writes on "/": the step made a top-level directory
	// and wrote in it and in "/" itself (as a Dockerfile's RUN mkdir /app
	// && ... does), and the result keeps both. /proc stays closed to the
	// step (a read-only mount: /proc/sys/kernel/shmmax belongs to the
	// step's own IPC namespace, so only the mount refuses it).
	ll, err := a.Exec(ctx, sb.ID, client.ExecRequest{User: "root", Cmd: []string{"cat", "/app/rootdir.txt", "/newtop/f", "/new.txt", "/app/proc.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(ll.Stdout); len(f) < 4 || f[0] != "drwxr-xr-x" || f[2] != "0" || !strings.HasSuffix(ll.Stdout, "\nx\ny\nrefused\n") {
		t.Fatalf("top-level writes and /proc in the RUN sandbox: %q %q", ll.Stdout, ll.Stderr)
	}
	// The sandbox's own setup (/etc/hosts...) is not part of the layers.
	if r, _ := a.Exec(ctx, sb.ID, client.ExecRequest{User: "root", Cmd: []string{"sh", "-c", "grep -c build /etc/hostname; true"}}); strings.TrimSpace(r.Stdout) != "0" {
		t.Errorf("the build sandbox's hostname leaked into the image: %q", r.Stdout)
	}
	// A cached rebuild runs nothing.
	_, evs, err = buildTpl(t, a, client.TemplateBuild{Name: "ran", Replace: true}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if strings.HasPrefix(e.Instruction, "RUN") && !e.Cached {
			t.Errorf("rebuild ran %q again: %+v", e.Instruction, evs)
		}
		if e.Output != "" {
			t.Errorf("a cached rebuild printed step output %q", e.Output)
		}
	}
}

// A RUN that fails reports its exit code and the tail of its output, and
// nothing is installed.
func TestTemplateBuildRunFails(t *testing.T) {
	s := newStack(t)
	a := s.tenant(t, "failer", client.Quotas{})
	df := "FROM " + s.ref + "\nRUN echo about to fail; echo on stderr >&2; exit 7\n"
	_, _, err := buildTpl(t, a, client.TemplateBuild{Name: "broken"}, writeCtx(t, map[string]string{"Dockerfile": df}))
	ce, ok := err.(*client.Error)
	if !ok || ce.Code != "invalid_argument" || !strings.Contains(ce.Message, "exit code 7") ||
		!strings.Contains(ce.Message, "about to fail") || !strings.Contains(ce.Message, "on stderr") {
		t.Fatalf("failed RUN: %v", err)
	}
	if _, err := a.Template(context.Background(), "broken"); code(err) != "not_found" {
		t.Fatalf("a failed build left a template: %v", err)
	}
}

// A RUN has no network under --net none (the default): it cannot reach
// an HTTP server on one of the host's own addresses, which the test
// reaches from the host (positive control).
func TestTemplateBuildRunNoNetwork(t *testing.T) {
	addr := hostAddr(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached\n") }),
		ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("positive control: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "reached\n" {
		t.Fatalf("positive control: %q", body)
	}
	s := newStack(t)
	a := s.tenant(t, "offline", client.Quotas{})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	df := "FROM " + s.ref + "\nRUN printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 " + host + " " + port + " | grep -q reached && echo REACHED\n"
	_, _, err = buildTpl(t, a, client.TemplateBuild{Name: "net"}, writeCtx(t, map[string]string{"Dockerfile": df}))
	ce, ok := err.(*client.Error)
	if !ok {
		t.Fatalf("RUN under --net none: %v", err)
	}
	_, tail, _ := strings.Cut(ce.Message, "\n") // the first line quotes the instruction
	if ce.Code != "invalid_argument" || !strings.Contains(ce.Message, "exit code") || strings.Contains(tail, "REACHED") ||
		!strings.Contains(tail, "nc: ") {
		t.Fatalf("RUN under --net none: %v", err)
	}
}

// hostAddr is a non-loopback address of this host (skip without one).
func hostAddr(t *testing.T) string {
	ifs, _ := net.InterfaceAddrs()
	for _, a := range ifs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Skip("the host has no non-loopback IPv4 address to serve the positive control on")
	return ""
}

// A cancelled build kills its RUN's sandbox and leaves no partial layer
// or staging behind.
func TestTemplateBuildRunCancel(t *testing.T) {
	s := newStack(t)
	a := s.tenant(t, "canceller", client.Quotas{})
	df := "FROM " + s.ref + "\nRUN echo started; sleep 600\n"
	buf := buildCtx(t, writeCtx(t, map[string]string{"Dockerfile": df}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sandboxes := filepath.Join(s.e.Data, "run", "sandboxes")
	staging := filepath.Join(s.e.Data, "template-tmp", "build")
	running := false
	_, err := a.BuildTemplate(ctx, client.TemplateBuild{Name: "cancelled"}, buf, int64(buf.Len()), func(e client.TemplateEvent) {
		if strings.Contains(e.Output, "started") {
			running = entries(t, sandboxes) > 0 && entries(t, staging) > 0
			cancel()
		}
	})
	if err == nil {
		t.Fatal("a cancelled build succeeded")
	}
	if !running {
		t.Fatal("the RUN was not seen running in a sandbox with a staging directory")
	}
	waitFor(t, func() bool { return entries(t, sandboxes) == 0 && entries(t, staging) == 0 })
	if _, err := a.Template(context.Background(), "cancelled"); code(err) != "not_found" {
		t.Fatalf("a cancelled build left a template: %v", err)
	}
}

func entries(t *testing.T, dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(ents)
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("not cleaned up in 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
