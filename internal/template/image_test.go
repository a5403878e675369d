//go:build linux

package template

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
)

type imageEnv struct {
	reg    *ocitest.Registry
	client *oci.Client
	data   string
	r      *Registry
	st     *layers.Store
}

func newImageEnv(t *testing.T) *imageEnv {
	t.Helper()
	requireRoot(t)
	e := &imageEnv{reg: ocitest.Start(t)}
	creds, err := oci.DockerConfig(e.reg.DockerConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if e.client, err = oci.New(oci.Options{Credentials: creds, Insecure: []string{e.reg.Host}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.client.Close)
	e.data = t.TempDir()
	e.reopen(t)
	return e
}

// reopen opens the registry and the store afresh, as a restart does.
func (e *imageEnv) reopen(t *testing.T) {
	t.Helper()
	var err error
	if e.r, err = Open(e.data, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if e.st, err = layers.Open(layers.Options{Dir: filepath.Join(e.data, "layers")}); err != nil {
		t.Fatal(err)
	}
	e.r.UseLayerStore(e.st)
}

func baseLayer(t *testing.T) []byte {
	return ocitest.LayerTar(t, map[string]ocitest.File{
		"etc/":       {Dir: true},
		"etc/passwd": {Body: "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n"},
		"etc/group":  {Body: "root:x:0:\napp:x:1000:\nstaff:x:50:\n"},
		"bin/":       {Dir: true},
		"bin/sh":     {Body: "not really a shell", Mode: 0o755},
	})
}

func appLayer(t *testing.T, name string) []byte {
	return ocitest.LayerTar(t, map[string]ocitest.File{
		"app/":        {Dir: true},
		"app/" + name: {Body: name + "\n"},
	})
}

func TestImageTemplatesShareLayers(t *testing.T) {
	e := newImageEnv(t)
	ctx := context.Background()
	cfg := v1.Config{
		Env: []string{"PATH=/bin", "MODE=a"}, WorkingDir: "/app", User: "app:staff",
		ExposedPorts: map[string]struct{}{"8080/tcp": {}, "53/udp": {}},
		Labels:       map[string]string{LabelStartCmd: `["/bin/sh","-c","serve"]`, LabelReadyCmd: "test -e /tmp/ready"},
	}
	e.reg.Push(t, e.reg.Ref("a:1"), ocitest.Image(t, cfg, types.OCILayer, baseLayer(t), appLayer(t, "a")))
	e.reg.Push(t, e.reg.Ref("b:1"), ocitest.Image(t, v1.Config{User: "1000"}, types.OCILayerZStd, baseLayer(t), appLayer(t, "b")))
	var lines []string
	ta, err := e.r.PullImage(ctx, e.client, e.reg.Ref("a:1"), ImageOptions{Name: "a", Progress: func(s string) { lines = append(lines, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.PullImage(ctx, e.client, e.reg.Ref("b:1"), ImageOptions{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Error("no progress")
	}
	// The shared base is on disk once.
	ents, _ := os.ReadDir(filepath.Join(e.data, "layers", "sha256"))
	if len(ents) != 3 {
		t.Fatalf("%d layer directories, want 3 (base, a, b)", len(ents))
	}
	if ta.Kind != KindImage || len(ta.Layers) != 2 || ta.Root != "" {
		t.Fatalf("template: %+v", ta)
	}
	if b, err := os.ReadFile(filepath.Join(ta.Layers[0], "app/a")); err != nil || string(b) != "a\n" {
		t.Fatalf("top layer first: %q %v", b, err)
	}
	want := Defaults{
		Env: []string{"PATH=/bin", "MODE=a"}, WorkingDir: "/app", User: "app:staff", UID: 1000, GID: 50,
		UserName: "app", Home: "/home/app",
		ExposedPorts: []Port{{53, "udp"}, {8080, "tcp"}},
		Labels:       cfg.Labels,
		StartCmd:     []string{"/bin/sh", "-c", "serve"},
		ReadyCmd:     []string{"/bin/sh", "-c", "test -e /tmp/ready"},
	}
	if !reflect.DeepEqual(*ta.Defaults, want) {
		t.Fatalf("defaults\n got %+v\nwant %+v", *ta.Defaults, want)
	}
	list, err := e.r.List()
	if err != nil {
		t.Fatal(err)
	}
	var base int64
	if l, ok := e.st.Get(ta.DiffIDs[0]); ok {
		base = l.DiskBytes
	}
	for _, i := range list {
		if i.Name == "a" || i.Name == "b" {
			if !i.Ready || i.Kind != KindImage || i.SharedBytes != base || i.SizeBytes <= base {
				t.Fatalf("ls %s: %+v (base %d)", i.Name, i, base)
			}
		}
	}

	// A restart keeps both; a name clash is refused.
	e.reopen(t)
	tb, err := e.r.Get("b")
	if err != nil || tb.Defaults.UID != 1000 || tb.Defaults.GID != 1000 {
		t.Fatalf("after restart: %+v %v", tb, err)
	}
	if _, err := e.r.PullImage(ctx, e.client, e.reg.Ref("b:1"), ImageOptions{Name: "a"}); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("name clash: %v", err)
	}

	// rm: refused while in use; then the unique layer is collectable and
	// the shared base is not.
	inUse := true
	if err := e.r.Remove("a", func(string) bool { return inUse }); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("rm in use: %v", err)
	}
	inUse = false
	if err := e.r.Remove("a", func(string) bool { return inUse }); err != nil {
		t.Fatal(err)
	}
	if n, _, err := e.r.GC(); err != nil || n != 1 {
		t.Fatalf("GC = %d, %v; want a's own layer", n, err)
	}
	if _, err := e.r.Get("b"); err != nil {
		t.Fatalf("b after a's removal: %v", err)
	}
	if _, err := e.r.Get("a"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("a after removal: %v", err)
	}

	// Export b, import it under another name.
	var buf bytes.Buffer
	if err := e.r.ExportImage(ctx, "b", &buf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "b.tar")
	os.WriteFile(p, buf.Bytes(), 0o644)
	tc, err := e.r.ImportImage(ctx, e.client, p, "", ImageOptions{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(tc.Layers[0], "app/b")); err != nil || string(b) != "b\n" {
		t.Fatalf("imported export: %q %v", b, err)
	}
	// Push b and pull it back.
	if err := e.r.PushImage(ctx, e.client, "b", e.reg.Ref("b-pushed:1")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.PullImage(ctx, e.client, e.reg.Ref("b-pushed:1"), ImageOptions{Name: "d"}); err != nil {
		t.Fatal(err)
	}
}

func TestImageTemplateCrashLeavesNothing(t *testing.T) {
	e := newImageEnv(t)
	ctx := context.Background()
	e.reg.Push(t, e.reg.Ref("a:1"), ocitest.Image(t, v1.Config{}, types.OCILayer, baseLayer(t)))
	// A crash after the layer references were written but before the
	// template was installed: an owner with no template.
	img, err := e.client.Pull(ctx, e.reg.Ref("a:1"))
	if err != nil {
		t.Fatal(err)
	}
	lease := e.st.NewLease()
	ls, err := e.client.Unpack(ctx, img, e.st, lease, oci.UnpackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.SetRefs(refOwnerPrefix+"x:dead", []string{ls[0].DiffID}); err != nil {
		t.Fatal(err)
	}
	lease.Release()
	e.reopen(t)
	if n, _, _ := e.r.GC(); n != 1 {
		t.Fatalf("GC after restart removed %d layers, want the orphan's 1", n)
	}
	// A cancelled pull installs nothing and leaves no staging.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.r.PullImage(cctx, e.client, e.reg.Ref("a:1"), ImageOptions{Name: "z"}); err == nil {
		t.Fatal("cancelled pull succeeded")
	}
	if _, err := e.r.Get("z"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("cancelled pull left a template: %v", err)
	}
	if l := leftovers(t, e.data); len(l) != 0 {
		t.Fatalf("staging left: %v", l)
	}
}

func TestResolveUser(t *testing.T) {
	requireRoot(t)
	st, err := layers.Open(layers.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	lease := st.NewLease()
	defer lease.Release()
	put := func(data []byte) string {
		l, err := st.Put(context.Background(), lease, "", bytes.NewReader(data), layers.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Dir
	}
	bottom := put(baseLayer(t))
	// The top layer deletes /etc/group and replaces passwd.
	top := put(ocitest.LayerTar(t, map[string]ocitest.File{
		"etc/":          {Dir: true},
		"etc/.wh.group": {},
		"etc/passwd":    {Body: "svc:x:2000:2001::/:/bin/sh\nbig:x:70000:70000::/:/bin/sh\n"},
	}))
	lowers := []string{top, bottom}
	for _, c := range []struct {
		user     string
		uid, gid int
		bad      bool
	}{
		{"", 0, 0, false},
		{"svc", 2000, 2001, false},
		{"1000", 1000, 1000, false},
		{"2000", 2000, 2001, false},
		{"svc:7", 2000, 7, false},
		{"app", -1, -1, true},       // only in the lower passwd, which is replaced
		{"svc:staff", -1, -1, true}, // /etc/group is whited out
		{"big", -1, -1, true},       // beyond the sandbox's ids
	} {
		uid, gid, problem := resolveUser(c.user, lowers)
		if uid != c.uid || gid != c.gid || (problem != "") != c.bad {
			t.Errorf("resolveUser(%q) = %d, %d, %q", c.user, uid, gid, problem)
		}
	}
}
