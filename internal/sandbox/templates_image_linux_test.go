//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

// busyboxLayer is a small real userland: the static busybox and its
// applets, an account database with a non-root user, and its home.
func busyboxLayer(t *testing.T) []byte {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox not installed (apt-get install busybox-static)")
	}
	body, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]ocitest.File{
		"bin/":         {Dir: true},
		"bin/busybox":  {Body: string(body), Mode: 0o755},
		"etc/":         {Dir: true},
		"etc/passwd":   {Body: "root:x:0:0:root:/root:/bin/sh\napp:x:1234:2345:app:/home/app:/bin/sh\n"},
		"etc/group":    {Body: "root:x:0:\napp:x:2345:\n"},
		"home/":        {Dir: true},
		"home/app/":    {Dir: true, UID: 1234},
		"srv/":         {Dir: true},
		"srv/www/":     {Dir: true, UID: 1234},
		"srv/www/base": {Body: "from the base layer\n"},
	}
	for _, a := range []string{"sh", "id", "pwd", "env", "cat", "ls", "echo", "true", "false", "sleep", "test", "touch", "rm", "nc", "httpd", "wget", "mkdir"} {
		files["bin/"+a] = ocitest.File{Link: "busybox"}
	}
	return ocitest.LayerTar(t, files)
}

// pullImage pushes an image made of layers (bottom first) with cfg to a
// local docker-registry and pulls it into e's template registry as name.
func pullImage(t *testing.T, e *testenv.Env, name string, cfg v1.Config, ls ...[]byte) *template.Template {
	t.Helper()
	reg := ocitest.Start(t)
	creds, err := oci.DockerConfig(reg.DockerConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := oci.New(oci.Options{Credentials: creds, Insecure: []string{reg.Host}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ref := reg.Ref("paddock/" + name + ":1")
	reg.Push(t, ref, ocitest.Image(t, cfg, types.OCILayer, ls...))
	tpl, err := e.Templates.PullImage(context.Background(), c, ref, template.ImageOptions{Name: name})
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	return tpl
}

func TestCreateFromImageTemplate(t *testing.T) { createFromImage(t, "") }

// On gVisor the image's layers are the lowers of the host overlay runsc's
// gofer serves (internal/runtime/gvisor, launch_linux.go): the same
// files, env, workdir and user as natively.
func TestCreateFromImageTemplateGVisor(t *testing.T) {
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
	createFromImage(t, wire.RuntimeGVisor)
}

func createFromImage(t *testing.T, rt string) {
	e := testenv.New(t, testenv.Options{})
	top := ocitest.LayerTar(t, map[string]ocitest.File{
		"srv/":         {Dir: true},
		"srv/www/":     {Dir: true, UID: 1234},
		"srv/www/top":  {Body: "from the top layer\n"},
		"srv/www/base": {Body: "overridden by the top layer\n"},
	})
	cfg := v1.Config{
		Env:        []string{"PATH=/bin", "GREETING=hello from the image", "SHARED=image"},
		WorkingDir: "/srv/www",
		User:       "app",
	}
	tpl := pullImage(t, e, "bbapp", cfg, busyboxLayer(t), top)
	if tpl.Kind != template.KindImage || len(tpl.Layers) != 2 {
		t.Fatalf("template: kind %q, %d layers", tpl.Kind, len(tpl.Layers))
	}
	sb := e.Create(sandbox.Spec{Template: "bbapp", Runtime: rt, Env: map[string]string{"SHARED": "spec"}})
	// The image's files (the top layer over the base), env, workdir, user.
	for _, c := range []struct{ script, want string }{
		{"cat base top", "overridden by the top layer\nfrom the top layer\n"},
		{"pwd", "/srv/www\n"},
		{"id -u; id -g; id -un; echo $HOME", "1234\n2345\napp\n/home/app\n"},
		{"echo $GREETING; echo $SHARED", "hello from the image\nspec\n"},
		{"touch mine && ls", "base\nmine\ntop\n"}, // the image user owns /srv/www: writes go to the sandbox's layer
	} {
		res := e.Sh(sb.ID, c.script)
		if res.ExitCode != 0 || res.Stdout != c.want {
			t.Errorf("%q: exit %d, stdout %q (want %q), stderr %q", c.script, res.ExitCode, res.Stdout, c.want, res.Stderr)
		}
	}
	if rt == wire.RuntimeGVisor {
		// Hibernated and woken, the sandbox is back on the image's layers
		// (the template's, leased again) with its own writes and the
		// image's user.
		ctx := context.Background()
		if _, err := e.Manager.Hibernate(ctx, e.Scope, sb.ID); err != nil {
			t.Fatalf("hibernate: %v", err)
		}
		if _, err := e.Manager.Resume(ctx, e.Scope, sb.ID); err != nil {
			t.Fatalf("wake: %v", err)
		}
		if res := e.Sh(sb.ID, "ls; id -un; pwd"); res.Stdout != "base\nmine\ntop\napp\n/srv/www\n" {
			t.Errorf("woken sandbox: %q %q", res.Stdout, res.Stderr)
		}
	}
	// A request's own user still wins.
	res, err := e.Client.Exec(context.Background(), sb.ID, execAs("root", "id", "-u"))
	if err != nil || strings.TrimSpace(res.Stdout) != "0" {
		t.Errorf("exec as root: %v %q", err, res.Stdout)
	}
	// Nothing was copied: the layers are the store's, and a second
	// sandbox sees the image unchanged.
	sb2 := e.Create(sandbox.Spec{Template: "bbapp", Runtime: rt})
	if res := e.Sh(sb2.ID, "ls"); res.Stdout != "base\ntop\n" {
		t.Errorf("second sandbox sees %q", res.Stdout)
	}
	// rm is refused while sandboxes use the template, and works after.
	if err := e.Templates.Remove("bbapp", e.Manager.TemplateInUse); errs.CodeOf(err) != errs.CodeConflict {
		t.Fatalf("remove while in use: %v", err)
	}
	for _, id := range []string{sb.ID, sb2.ID} {
		if err := e.Manager.Delete(context.Background(), e.Scope, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Templates.Remove("bbapp", e.Manager.TemplateInUse); err != nil {
		t.Fatalf("remove: %v", err)
	}
}

func execAs(user string, argv ...string) sandbox.ExecRequest {
	return sandbox.ExecRequest{Cmd: argv, User: user}
}

func TestImageStartCommand(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	base := busyboxLayer(t)
	ctx := context.Background()
	cases := []struct {
		name    string
		labels  map[string]string
		ports   map[string]struct{}
		wantErr string // a substring of the create's error; "" means it succeeds
		check   string // then this script must print "ok"
	}{
		{name: "port", labels: map[string]string{template.LabelStartCmd: `["httpd","-f","-p","8080","-h","/srv/www"]`},
			ports: map[string]struct{}{"8080/tcp": {}},
			check: `wget -qO- http://127.0.0.1:8080/base >/dev/null && echo ok`},
		{name: "ready", labels: map[string]string{template.LabelStartCmd: "sleep 1; touch /tmp/ready; exec sleep 1000",
			template.LabelReadyCmd: "test -f /tmp/ready"},
			check: `test -f /tmp/ready && echo ok`},
		{name: "fails", labels: map[string]string{template.LabelStartCmd: "echo boom >&2; exit 3",
			template.LabelReadyCmd: "false"}, wantErr: "exited with code 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pullImage(t, e, "start-"+c.name, v1.Config{Env: []string{"PATH=/bin"}, Labels: c.labels, ExposedPorts: c.ports}, base)
			sb, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Template: "start-" + c.name})
			if c.wantErr != "" {
				if err == nil || errs.CodeOf(err) != errs.CodeInvalid || !strings.Contains(errs.Public(err), c.wantErr) ||
					!strings.Contains(errs.Public(err), "boom") {
					t.Fatalf("create: %v (want %q and the output)", err, c.wantErr)
				}
				if list, _ := e.Manager.List(ctx, e.Scope, nil); len(list) != 0 {
					t.Fatalf("a failed start left sandboxes: %v", list)
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if res := e.Sh(sb.ID, c.check); res.Stdout != "ok\n" {
				t.Fatalf("not ready when running: %q %q", res.Stdout, res.Stderr)
			}
			_ = e.Manager.Delete(ctx, e.Scope, sb.ID)
		})
	}
}

// A sandbox holds its template's layers: replacing the template and
// collecting garbage leaves them while it runs, and frees them after.
func TestImageTemplateLease(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	one := ocitest.LayerTar(t, map[string]ocitest.File{"srv/": {Dir: true}, "srv/v": {Body: "one\n"}})
	tpl := pullImage(t, e, "leased", v1.Config{Env: []string{"PATH=/bin"}}, busyboxLayer(t), one)
	sb := e.Create(sandbox.Spec{Template: "leased"})
	two := ocitest.LayerTar(t, map[string]ocitest.File{"srv/": {Dir: true}, "srv/v": {Body: "two\n"}})
	pullReplace(t, e, "leased", two)
	if _, _, err := e.Templates.GC(); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Stack.Layers.Get(tpl.DiffIDs[1]); !ok {
		t.Fatal("GC removed a layer a running sandbox uses")
	}
	if res := e.Sh(sb.ID, "cat /srv/v"); res.Stdout != "one\n" {
		t.Fatalf("running sandbox reads %q", res.Stdout)
	}
	if res := e.Sh(e.Create(sandbox.Spec{Template: "leased"}).ID, "cat /srv/v"); res.Stdout != "two\n" {
		t.Fatalf("new sandbox reads %q", res.Stdout)
	}
	if err := e.Manager.Delete(ctx, e.Scope, sb.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, _, _ = e.Templates.GC()
		_, ok := e.Stack.Layers.Get(tpl.DiffIDs[1])
		return !ok
	})
}

func pullReplace(t *testing.T, e *testenv.Env, name string, top []byte) {
	t.Helper()
	reg := ocitest.Start(t)
	creds, _ := oci.DockerConfig(reg.DockerConfig(t))
	c, err := oci.New(oci.Options{Credentials: creds, Insecure: []string{reg.Host}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ref := reg.Ref("paddock/" + name + ":2")
	reg.Push(t, ref, ocitest.Image(t, v1.Config{Env: []string{"PATH=/bin"}}, types.OCILayer, busyboxLayer(t), top))
	if _, err := e.Templates.PullImage(context.Background(), c, ref, template.ImageOptions{Name: name, Replace: true}); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if ok() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("condition not met in 5s")
}

// BenchmarkCreateExecDeleteImage: create→exec→delete from a two-layer
// OCI template beside the host template, in one run (target: within 10 %),
// on native and, with runsc installed, on gVisor.
func BenchmarkCreateExecDeleteImage(b *testing.B) {
	e := testenv.New(b, testenv.Options{})
	reg := ocitest.Start(b)
	creds, err := oci.DockerConfig(reg.DockerConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	c, err := oci.New(oci.Options{Credentials: creds, Insecure: []string{reg.Host}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ref := reg.Ref("paddock/bench:1")
	reg.Push(b, ref, ocitest.Image(b, v1.Config{Env: []string{"PATH=/bin"}}, types.OCILayer,
		ocitest.Busybox(b, nil), ocitest.LayerTar(b, map[string]ocitest.File{"srv/": {Dir: true}, "srv/x": {Body: "x\n"}})))
	if _, err := e.Templates.PullImage(context.Background(), c, ref, template.ImageOptions{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	rts := []string{wire.RuntimeNative}
	if _, err := gvisor.FindRunsc(""); err == nil {
		rts = append(rts, wire.RuntimeGVisor)
	}
	for _, rt := range rts {
		benchCreateExecDelete(b, e, rt)
	}
}

// benchCreateExecDelete times create→exec→delete from the host and the
// image template in pairs (the order alternating), so that a load that
// drifts during the run weighs on both alike; ns/op is a pair, and the
// metrics are each template's mean and their ratio.
func benchCreateExecDelete(b *testing.B, e *testenv.Env, rt string) {
	ctx := context.Background()
	one := func(b *testing.B, tpl string) time.Duration {
		t0 := time.Now()
		sb, err := e.Manager.Create(ctx, e.Scope, sandbox.Spec{Template: tpl, Runtime: rt})
		if err != nil {
			b.Fatal(err)
		}
		res, err := e.Client.Exec(ctx, sb.ID, execAs("", "/bin/true"))
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("exec: %v %+v", err, res)
		}
		if err := e.Manager.Delete(ctx, e.Scope, sb.ID); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	b.Run(rt, func(b *testing.B) {
		var host, image time.Duration
		for i := 0; i < b.N; i++ {
			if i%2 == 0 {
				host += one(b, "host")
				image += one(b, "bench")
			} else {
				image += one(b, "bench")
				host += one(b, "host")
			}
		}
		n := float64(b.N)
		b.ReportMetric(host.Seconds()*1000/n, "ms_host")
		b.ReportMetric(image.Seconds()*1000/n, "ms_image")
		b.ReportMetric(image.Seconds()/host.Seconds(), "image/host")
	})
}

// A hibernated sandbox holds its template's layers too: replacing the
// template and collecting garbage while it sleeps — before and after a
// server restart — leaves them, and it wakes on them (its old files, its
// own writes); deleted, it frees them.
func TestImageTemplateLeaseHibernated(t *testing.T) {
	if _, err := gvisor.FindRunsc(""); err != nil {
		t.Skipf("runsc is not installed (scripts/deps.sh builds it): %v", errs.Public(err))
	}
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	one := ocitest.LayerTar(t, map[string]ocitest.File{"srv/": {Dir: true}, "srv/v": {Body: "one\n"}})
	tpl := pullImage(t, e, "slept", v1.Config{Env: []string{"PATH=/bin"}}, busyboxLayer(t), one)
	sb := e.Create(sandbox.Spec{Template: "slept", Runtime: wire.RuntimeGVisor})
	if res := e.Sh(sb.ID, "echo mine > /srv/mine && cat /srv/v"); res.Stdout != "one\n" {
		t.Fatalf("before: %q %q", res.Stdout, res.Stderr)
	}
	if _, err := e.Manager.Hibernate(ctx, e.Scope, sb.ID); err != nil {
		t.Fatalf("hibernate: %v", err)
	}
	two := ocitest.LayerTar(t, map[string]ocitest.File{"srv/": {Dir: true}, "srv/v": {Body: "two\n"}})
	pullReplace(t, e, "slept", two)
	gcKeeps(t, e, tpl.DiffIDs[1], "GC removed a layer a hibernated sandbox sleeps on")
	e = restart(t, e)
	gcKeeps(t, e, tpl.DiffIDs[1], "after a restart, GC removed a layer a hibernated sandbox sleeps on")
	if got, err := e.Manager.Get(ctx, e.Scope, sb.ID); err != nil || got.State != sandbox.StateHibernated {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	if _, err := e.Manager.Resume(ctx, e.Scope, sb.ID); err != nil {
		t.Fatalf("wake after replace + GC: %v", err)
	}
	if res := e.Sh(sb.ID, "cat /srv/v /srv/mine"); res.Stdout != "one\nmine\n" {
		t.Fatalf("woken sandbox reads %q %q", res.Stdout, res.Stderr)
	}
	if res := e.Sh(e.Create(sandbox.Spec{Template: "slept", Runtime: wire.RuntimeGVisor}).ID, "cat /srv/v"); res.Stdout != "two\n" {
		t.Fatalf("new sandbox reads %q", res.Stdout)
	}
	// Hibernated again, then deleted: the lease goes with it.
	if _, err := e.Manager.Hibernate(ctx, e.Scope, sb.ID); err != nil {
		t.Fatalf("second hibernate: %v", err)
	}
	gcKeeps(t, e, tpl.DiffIDs[1], "GC removed the layer of a sandbox hibernated a second time")
	if err := e.Manager.Delete(ctx, e.Scope, sb.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, _, _ = e.Templates.GC()
		_, ok := e.Stack.Layers.Get(tpl.DiffIDs[1])
		return !ok
	})
}

// gcKeeps collects the layer store's garbage and fails with why if layer
// id went with it.
func gcKeeps(t *testing.T, e *testenv.Env, id, why string) {
	t.Helper()
	if _, _, err := e.Templates.GC(); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Stack.Layers.Get(id); !ok {
		t.Fatal(why)
	}
}
