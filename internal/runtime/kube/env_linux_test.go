//go:build linux

package kube_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestbin"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/runtime/kube"
	"github.com/paddockhq/paddock/internal/runtime/kube/kubetest"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/template"
)

func TestMain(m *testing.M) { kubetest.Main(m) }

var guestImage struct {
	once sync.Once
	ref  string
	err  error
}

// pushGuest pushes the guest image once per test binary: the embedded
// guest when `make guest` ran, else one built now.
func pushGuest(t testing.TB, c *kubetest.Cluster) string {
	t.Helper()
	guestImage.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		bin := guestbin.Guest()
		if bin == nil {
			path := filepath.Join(t.TempDir(), "paddock-guest")
			if guestImage.err = kubetest.GoBuild(ctx, path, "github.com/paddockhq/paddock/cmd/paddock-guest"); guestImage.err != nil {
				return
			}
			if bin, guestImage.err = os.ReadFile(path); guestImage.err != nil {
				return
			}
		}
		guestImage.ref, guestImage.err = kube.PushGuestImage(ctx, c.Registry+"/paddock/guest", bin, true)
	})
	if guestImage.err != nil {
		t.Fatal(guestImage.err)
	}
	return guestImage.ref
}

// templates maps every template to the cluster's busybox image: templates
// as images come with issue 15.
type templates struct{}

func (templates) Get(name string) (*template.Template, error) {
	if name != "busybox" {
		return nil, errs.NotFound("template %q not found", name)
	}
	return &template.Template{Name: name}, nil
}

// kenv is the house a kube-runtime Paddock builds: store, audit log,
// manager, and the kube backend on the test cluster, in a namespace of
// its own.
type kenv struct {
	t     testing.TB
	c     *kubetest.Cluster
	ns    string
	dir   string
	opts  func(*kube.Options)
	b     *kube.Backend
	m     *sandbox.Manager
	db    *store.DB
	alog  *audit.Log
	sc    sandbox.Scope
	image string
}

func randName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func newEnv(t testing.TB, opts func(*kube.Options)) *kenv {
	t.Helper()
	c := kubetest.Get(t)
	e := &kenv{t: t, c: c, ns: randName("kt-"), dir: t.TempDir(), opts: opts, image: c.BusyboxImage,
		sc: sandbox.Scope{Tenant: "acme", Actor: "test", Rights: rights.All}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Namespace(ctx, e.ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Namespaces terminate in the background; the cluster goes at the
		// end of the package anyway.
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), e.ns, metav1.DeleteOptions{})
	})
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *kenv) options() kube.Options {
	o := kube.Options{Config: e.c.Config, Namespace: e.ns, GuestImage: pushGuest(e.t, e.c),
		Image:        func(*template.Template) (string, error) { return e.image, nil },
		ReadyTimeout: 90 * time.Second,
		Log:          slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if e.opts != nil {
		e.opts(&o)
	}
	return o
}

// open builds (or, after close, rebuilds: a restart) the house.
func (e *kenv) open() {
	t := e.t
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	if e.b, err = kube.New(ctx, e.options()); err != nil {
		t.Fatal(err)
	}
	if e.db, err = store.Open(e.dir); err != nil {
		t.Fatal(err)
	}
	if e.alog, err = audit.Open(audit.Options{Dir: filepath.Join(e.dir, "audit"), Sync: audit.SyncAlways, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	lim := sandbox.DefaultLimits(2)
	lim.Default.Template = "busybox"
	lim.Default.MemoryMB = 128
	lim.Default.CPU = 0.5
	e.m = sandbox.New(sandbox.Config{Limits: lim}, sandbox.Deps{Store: e.db, Backend: e.b, Templates: templates{},
		Observer: audit.NewRecorder(e.alog, audit.RecorderOptions{}), Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err := e.m.Start(ctx); err != nil {
		t.Fatal(err)
	}
}

// shutdown stops the house without deleting sandboxes (a server exit).
func (e *kenv) shutdown() {
	if e.m == nil {
		return
	}
	_ = e.m.Close(context.Background())
	_ = e.b.Close()
	_ = e.alog.Close()
	_ = e.db.Close()
	e.m = nil
}

func (e *kenv) close() {
	if e.m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, _ := e.m.List(ctx, e.sc, nil)
	for _, sb := range list {
		_ = e.m.Delete(ctx, e.sc, sb.ID)
	}
	e.shutdown()
}

func (e *kenv) create(spec sandbox.Spec) sandbox.Sandbox {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := e.m.Create(ctx, e.sc, spec)
	if err != nil {
		e.t.Fatalf("create: %v\nkubelet log:\n%s", err, e.c.Log("kubelet", 20))
	}
	return sb
}

type buf struct{ out, errb bytes.Buffer }

func (b *buf) Stdout(p []byte) error { b.out.Write(p); return nil }
func (b *buf) Stderr(p []byte) error { b.errb.Write(p); return nil }

func (e *kenv) exec(id string, user string, argv ...string) (sandbox.ExecResult, string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var b buf
	res, err := e.m.Exec(ctx, e.sc, id, sandbox.ExecRequest{Cmd: argv, User: user}, nil, &b, false)
	return res, b.out.String(), b.errb.String(), err
}

func (e *kenv) sh(id, script string) string {
	e.t.Helper()
	res, out, stderr, err := e.exec(id, "", "/bin/sh", "-c", script)
	if err != nil {
		e.t.Fatalf("exec %q: %v", script, err)
	}
	if res.ExitCode != 0 {
		e.t.Fatalf("exec %q: exit %d: %s%s", script, res.ExitCode, out, stderr)
	}
	return strings.TrimSpace(out)
}

// auditActions lists the actions recorded for sandbox id.
func (e *kenv) auditActions(id string) []string {
	e.t.Helper()
	page, err := e.alog.Query(context.Background(), audit.Query{Sandbox: id, Limit: audit.MaxPage})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, r := range page.Records {
		var rec audit.Record
		if json.Unmarshal(r, &rec) == nil {
			out = append(out, rec.Action+"/"+rec.Phase)
		}
	}
	return out
}

// eventually polls f until it returns nil or d passes.
func eventually(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v: %v", what, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var errNotYet = errors.New("not yet")

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
