package dockerfile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/dockerfile/nsrunner"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/internal/template"
)

func TestMain(m *testing.M) {
	nsrunner.Main()
	os.Exit(m.Run())
}

var applets = []string{"sh", "ls", "cat", "echo", "id", "touch", "mkdir", "rm", "wget", "sleep", "test", "env", "pwd", "stat", "true", "false"}

// busyboxBase is a small real userland: Debian's static busybox.
func busyboxBase(t testing.TB) []byte {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skip("busybox-static not installed (apt-get install busybox-static)")
	}
	files := map[string]ocitest.File{
		"bin/":        {Dir: true},
		"bin/busybox": {Body: string(bb), Mode: 0o755},
		"etc/":        {Dir: true},
		"etc/passwd":  {Body: "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n"},
		"etc/group":   {Body: "root:x:0:\napp:x:1000:\n"},
		"etc/motd":    {Body: "welcome\n"},
		"tmp/":        {Dir: true, Mode: 0o1777},
		"root/":       {Dir: true, Mode: 0o700},
	}
	for _, a := range applets {
		files["bin/"+a] = ocitest.File{Link: "busybox"}
	}
	return ocitest.LayerTar(t, files)
}

type countingRunner struct {
	dockerfile.Runner
	n atomic.Int32
}

func (c *countingRunner) Run(ctx context.Context, req dockerfile.RunRequest) (dockerfile.RunResult, error) {
	c.n.Add(1)
	return c.Runner.Run(ctx, req)
}

type benv struct {
	reg    *ocitest.Registry
	tpl    *template.Registry
	st     *layers.Store
	b      *dockerfile.Builder
	runner *countingRunner
	tmp    string
	base   string
}

func newBuildEnv(t testing.TB, fetcher dockerfile.Fetcher) *benv {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: namespaces, id-mapped mounts, layer owners")
	}
	e := &benv{reg: ocitest.Start(t)}
	e.base = e.reg.Ref("base:1")
	e.reg.Push(t, e.base, ocitest.Image(t, v1.Config{Env: []string{"PATH=/bin"}}, types.OCILayer, busyboxBase(t)))
	data := t.TempDir()
	var err error
	if e.tpl, err = template.Open(data, nil); err != nil {
		t.Fatal(err)
	}
	if e.st, err = layers.Open(layers.Options{Dir: filepath.Join(data, "layers")}); err != nil {
		t.Fatal(err)
	}
	e.tpl.UseLayerStore(e.st)
	creds, _ := oci.DockerConfig(e.reg.DockerConfig(t))
	client, err := oci.New(oci.Options{Credentials: creds, Insecure: []string{e.reg.Host}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	e.runner = &countingRunner{Runner: nsrunner.Runner{}}
	e.tmp = filepath.Join(data, "build-tmp")
	e.b, err = dockerfile.New(dockerfile.Options{
		Store: e.st, Bases: &dockerfile.Resolver{Templates: e.tpl, Client: client, Store: e.st},
		Runner: e.runner, Fetcher: fetcher, CacheDir: filepath.Join(data, "build-cache"), TmpDir: e.tmp,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *benv) build(t testing.TB, ctx context.Context, df, ctxDir string, args map[string]string, name string) (*template.Template, []dockerfile.Event, error) {
	t.Helper()
	var evs []dockerfile.Event
	res, err := e.b.Build(ctx, dockerfile.Request{Dockerfile: []byte(df), Context: ctxDir, BuildArgs: args, Log: func(ev dockerfile.Event) { evs = append(evs, ev) }})
	if err != nil {
		return nil, evs, err
	}
	defer res.Lease.Release()
	tp, err := e.tpl.InstallImage(ctx, res.Layers, res.Config, template.Source{Kind: "build", Dockerfile: res.DockerfileDigest}, template.ImageOptions{Name: name, Replace: true})
	return tp, evs, err
}

// read reads p from a template's merged view (top layer first; the
// builder's whiteouts are 0/0 devices).
func read(t testing.TB, tp *template.Template, p string) (string, *syscall.Stat_t, bool) {
	for _, l := range tp.Layers {
		var st syscall.Stat_t
		full := filepath.Join(l, p)
		if err := syscall.Lstat(full, &st); err != nil {
			continue
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFCHR && st.Rdev == 0 {
			return "", nil, false
		}
		b, _ := os.ReadFile(full)
		return string(b), &st, true
	}
	return "", nil, false
}

const showDockerfile = `FROM %[1]s AS builder
RUN echo built > /artifact
FROM %[1]s
ARG GREETING=hello
ENV APP_HOME=/app MODE=$GREETING
WORKDIR $APP_HOME
COPY app.txt ./
COPY . /ctx/
COPY --from=builder /artifact /app/artifact
RUN echo "$MODE" > mode.txt && id -u > uid-root.txt && rm /etc/motd
USER app
RUN id -u > /tmp/uid.txt
EXPOSE 8080
LABEL sh.paddock.ready-cmd="test -e /tmp/uid.txt"
CMD ["sh", "-c", "echo hi"]
`

func writeContext(t testing.TB) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "app.txt"), []byte("app\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("do not copy\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "keep.txt"), []byte("keep\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".dockerignore"), []byte("secret.txt\n"), 0o644)
	return dir
}

func TestBuildShow(t *testing.T) {
	e := newBuildEnv(t, nil)
	ctx := context.Background()
	cdir := writeContext(t)
	df := fmt.Sprintf(showDockerfile, e.base)
	tp, evs, err := e.build(t, ctx, df, cdir, map[string]string{"GREETING": "hi"}, "app")
	if err != nil {
		t.Fatalf("build: %v\nevents: %+v", err, evs)
	}
	for p, want := range map[string]string{
		"app/app.txt":      "app\n",
		"app/artifact":     "built\n",
		"app/mode.txt":     "hi\n",
		"app/uid-root.txt": "0\n",
		"tmp/uid.txt":      "1000\n",
		"ctx/sub/keep.txt": "keep\n",
	} {
		got, _, ok := read(t, tp, p)
		if !ok || got != want {
			t.Errorf("%s = %q (%v), want %q", p, got, ok, want)
		}
	}
	if _, st, _ := read(t, tp, "tmp/uid.txt"); st == nil || st.Uid != 1000 {
		t.Errorf("a file USER app wrote is not owned by 1000 in its layer: %+v", st)
	}
	if _, _, ok := read(t, tp, "etc/motd"); ok {
		t.Error("RUN rm did not become a whiteout")
	}
	if _, _, ok := read(t, tp, "ctx/secret.txt"); ok {
		t.Error(".dockerignore not honoured")
	}
	if _, _, err := e.build(t, ctx, fmt.Sprintf("FROM %s\nCOPY secret.txt /s\n", e.base), cdir, nil, "ignored"); errs.CodeOf(err) != errs.CodeInvalid {
		t.Errorf("COPY of an ignored file: %v", err)
	}
	d := tp.Defaults
	if d.WorkingDir != "/app" || d.User != "app" || d.UID != 1000 || len(d.ExposedPorts) != 1 || d.ExposedPorts[0].Port != 8080 {
		t.Errorf("defaults: %+v", d)
	}
	if !strings.Contains(strings.Join(d.Env, " "), "MODE=hi") || strings.Contains(strings.Join(d.Env, " "), "GREETING") {
		t.Errorf("env: %v (ARG values must not become ENV)", d.Env)
	}
	if strings.Join(d.ReadyCmd, " ") != "/bin/sh -c test -e /tmp/uid.txt" {
		t.Errorf("ready cmd: %q", d.ReadyCmd)
	}
	runs := e.runner.n.Load()
	if runs != 3 {
		t.Fatalf("%d RUN steps executed, want 3", runs)
	}
	// The unchanged rebuild runs nothing and uses the cache throughout.
	_, evs, err = e.build(t, ctx, df, cdir, map[string]string{"GREETING": "hi"}, "app")
	if err != nil {
		t.Fatal(err)
	}
	if n := e.runner.n.Load(); n != runs {
		t.Fatalf("cached rebuild executed %d RUN steps", n-runs)
	}
	cached := 0
	for _, ev := range evs {
		if ev.Cached {
			cached++
		}
	}
	if cached < 6 {
		t.Fatalf("only %d cached steps in the rebuild: %+v", cached, evs)
	}
	// A changed context file re-runs from its COPY on.
	os.WriteFile(filepath.Join(cdir, "app.txt"), []byte("app v2\n"), 0o644)
	tp, _, err = e.build(t, ctx, df, cdir, map[string]string{"GREETING": "hi"}, "app")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := read(t, tp, "app/app.txt"); got != "app v2\n" {
		t.Fatalf("rebuilt app.txt = %q", got)
	}
	if n := e.runner.n.Load() - runs; n != 2 {
		t.Fatalf("%d RUN steps re-ran after a COPY change, want 2 (the builder stage stays cached)", n)
	}
	if ents, _ := os.ReadDir(e.tmp); len(ents) != 0 {
		t.Fatalf("staging left behind: %v", ents)
	}
}

func TestBuildFailures(t *testing.T) {
	e := newBuildEnv(t, nil)
	ctx := context.Background()
	// A server on the host's loopback: reachable from the host (the
	// positive control), not from a RUN under --net none.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached\n") })}
	go srv.Serve(l)
	defer srv.Close()
	url := "http://" + l.Addr().String() + "/"
	if out, err := exec.Command("/bin/busybox", "wget", "-q", "-O", "-", url).CombinedOutput(); err != nil || !strings.Contains(string(out), "reached") {
		t.Fatalf("positive control: the host cannot reach the server: %v %s", err, out)
	}
	cases := []struct {
		name, df string
		code     errs.Code
		exit     int
		tail     string
	}{
		{"exit-code", "FROM %s\nRUN echo oops >&2; exit 3\n", errs.CodeInvalid, 3, "oops"},
		{"network-none", "FROM %s\nRUN wget -q -O - " + url + "\n", errs.CodeInvalid, 1, ""},
		{"unknown-user", "FROM %s\nUSER nobody-here\nRUN true\n", errs.CodeInvalid, 0, ""},
		{"missing-copy-source", "FROM %s\nCOPY nope /x\n", errs.CodeInvalid, 0, ""},
		{"copy-escape", "FROM %s\nCOPY ../../../etc/shadow /x\n", errs.CodeInvalid, 0, ""},
		{"add-url-no-fetcher", "FROM %s\nADD " + url + " /x\n", errs.CodeForbidden, 0, ""},
		{"bad-base", "FROM %s-nope\n", errs.CodeNotFound, 0, ""},
		{"syntax", "FROM %s\nCOPY onlyone\n", errs.CodeInvalid, 0, ""},
		{"add-local-archive", "FROM %s\nADD a.tar.gz /x/\n", errs.CodeInvalid, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := strings.ReplaceAll(c.name, "_", "-")
			cdir := t.TempDir()
			os.WriteFile(filepath.Join(cdir, "a.tar.gz"), []byte{0x1f, 0x8b, 8, 0, 0, 0}, 0o644)
			_, _, err := e.build(t, ctx, fmt.Sprintf(c.df, e.base), cdir, nil, name)
			if errs.CodeOf(err) != c.code {
				t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), c.code)
			}
			var se *dockerfile.StepError
			if c.exit != 0 {
				if !errors.As(err, &se) || se.ExitCode != c.exit || !strings.Contains(se.OutputTail, c.tail) {
					t.Fatalf("step error = %+v", se)
				}
			}
			if _, err := e.tpl.Get(name); errs.CodeOf(err) != errs.CodeNotFound {
				t.Fatalf("a failed build left template %q: %v", name, err)
			}
			if ents, _ := os.ReadDir(e.tmp); len(ents) != 0 {
				t.Fatalf("staging left behind: %v", ents)
			}
		})
	}
	// A context symlink pointing at a host directory: a naive
	// filepath.Join reads the host's file (the positive control); COPY
	// through it is refused.
	t.Run("copy-through-context-symlink", func(t *testing.T) {
		hostDir := t.TempDir()
		os.WriteFile(filepath.Join(hostDir, "secret"), []byte("host secret\n"), 0o600)
		cdir := t.TempDir()
		os.Symlink(hostDir, filepath.Join(cdir, "link"))
		if b, err := os.ReadFile(filepath.Join(cdir, "link/secret")); err != nil || string(b) != "host secret\n" {
			t.Fatalf("positive control: %q %v", b, err)
		}
		for _, src := range []string{"link/secret", "link/*"} {
			tp, _, err := e.build(t, ctx, fmt.Sprintf("FROM %s\nCOPY %s /x\n", e.base, src), cdir, nil, "symlinked")
			if err == nil {
				got, _, _ := read(t, tp, "x")
				t.Fatalf("COPY %s succeeded (x = %q)", src, got)
			}
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Fatalf("COPY %s: %v", src, err)
			}
		}
	})
}

func TestBuildCancel(t *testing.T) {
	e := newBuildEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, _, err := e.build(t, ctx, fmt.Sprintf("FROM %s\nRUN echo started; sleep 60\n", e.base), "", nil, "cancelled")
	if err == nil {
		t.Fatal("cancelled build succeeded")
	}
	if time.Since(start) > 20*time.Second {
		t.Fatalf("cancel took %s", time.Since(start))
	}
	if ents, _ := os.ReadDir(e.tmp); len(ents) != 0 {
		t.Fatalf("partial RUN layer left: %v", ents)
	}
	out, _ := exec.Command("pgrep", "-f", "sleep 60").Output()
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("the RUN's processes survived the cancel: %s", out)
	}
}

type httpFetcher struct{}

func (httpFetcher) Fetch(ctx context.Context, url string, _ dockerfile.NetPolicy, w io.Writer, max int64) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, io.LimitReader(resp.Body, max+1))
	return filepath.Base(req.URL.Path), err
}

func TestBuildAddURL(t *testing.T) {
	e := newBuildEnv(t, httpFetcher{})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fetched\n") })}
	go srv.Serve(l)
	defer srv.Close()
	df := fmt.Sprintf("FROM %s\nADD http://%s/file.txt /data/\n", e.base, l.Addr())
	tp, _, err := e.build(t, context.Background(), df, "", nil, "add")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := read(t, tp, "data/file.txt"); got != "fetched\n" {
		t.Fatalf("ADD url = %q", got)
	}
	// The network policy is part of the ADD step's key: the same bytes
	// fetched under another policy are another step.
	addCached := func(req dockerfile.Request) bool {
		cached := false
		req.Dockerfile = []byte(df)
		req.Log = func(ev dockerfile.Event) {
			if strings.HasPrefix(ev.Instruction, "ADD") && ev.Cached {
				cached = true
			}
		}
		res, err := e.b.Build(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		res.Lease.Release()
		return cached
	}
	if !addCached(dockerfile.Request{}) {
		t.Error("an unchanged ADD <url> was not cached")
	}
	if addCached(dockerfile.Request{Network: "allowlist", Allow: []string{"files.example"}}) {
		t.Error("ADD <url> under another network policy came from the cache")
	}
}

// TestBuildFromTemplate: FROM an existing template (here an earlier
// build), and scratch.
func TestBuildFromTemplate(t *testing.T) {
	e := newBuildEnv(t, nil)
	ctx := context.Background()
	if _, _, err := e.build(t, ctx, fmt.Sprintf("FROM %s\nRUN echo one > /one\n", e.base), "", nil, "first"); err != nil {
		t.Fatal(err)
	}
	tp, _, err := e.build(t, ctx, "FROM first\nRUN cat /one > /two\n", "", nil, "second")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := read(t, tp, "two"); got != "one\n" {
		t.Fatalf("FROM template: %q", got)
	}
	cdir := t.TempDir()
	os.WriteFile(filepath.Join(cdir, "f"), []byte("s\n"), 0o644)
	tp, _, err = e.build(t, ctx, "FROM scratch\nCOPY f /f\n", cdir, nil, "scratchy")
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Layers) != 1 {
		t.Fatalf("scratch image has %d layers", len(tp.Layers))
	}
}
