//go:build linux

package gvisor_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/internal/template"
)

// An image template (a stack of store layers, no root tree) runs on
// gVisor: the layers, with the store's whiteouts and opaque directories,
// are the lowers of the host overlay the gofer serves, and the image's
// env, workdir and user are the commands' defaults. The sandbox's writes
// never reach the store.
func TestCreateFromImageLayers(t *testing.T) {
	e := newEnv(t, nil)
	st, err := layers.Open(layers.Options{Dir: filepath.Join(e.data, "store")})
	if err != nil {
		t.Fatal(err)
	}
	lease := st.NewLease()
	defer lease.Release()
	put := func(tar []byte) layers.Layer {
		t.Helper()
		l, err := st.Put(context.Background(), lease, "", bytes.NewReader(tar), layers.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	base := put(ocitest.Busybox(t, map[string]ocitest.File{
		"etc/passwd":   {Body: "root:x:0:0:root:/root:/bin/sh\napp:x:1234:2345:app:/home/app:/bin/sh\n"},
		"etc/group":    {Body: "root:x:0:\napp:x:2345:\n"},
		"home/":        {Dir: true},
		"home/app/":    {Dir: true, UID: 1234},
		"srv/":         {Dir: true, Mode: 0o777},
		"srv/gone":     {Body: "deleted by the top layer\n"},
		"srv/kept":     {Body: "from the base\n"},
		"srv/opq/":     {Dir: true},
		"srv/opq/old":  {Body: "hidden by the opaque directory\n"},
		"srv/override": {Body: "base\n"},
	}))
	top := put(ocitest.LayerTar(t, map[string]ocitest.File{
		"srv/":                 {Dir: true, Mode: 0o777},
		"srv/.wh.gone":         {},
		"srv/opq/":             {Dir: true},
		"srv/opq/.wh..wh..opq": {},
		"srv/opq/new":          {Body: "new\n"},
		"srv/override":         {Body: "top\n"},
	}))
	cfg := e.config()
	cfg.Template = &template.Template{Name: "img", Kind: template.KindImage, Layers: []string{top.Dir, base.Dir},
		Defaults: &template.Defaults{Env: []string{"PATH=/bin", "GREETING=from the image", "SHARED=image"},
			WorkingDir: "/srv", UID: 1234, GID: 2345, UserName: "app", Home: "/home/app"}}
	cfg.Env = map[string]string{"SHARED": "spec"}
	inst := e.create(cfg)
	for _, c := range []struct{ script, want string }{
		{"ls", "kept\nopq\noverride\n"},
		{"ls opq; cat override", "new\ntop\n"},
		{"pwd", "/srv\n"},
		{"id -u; id -g; id -un; echo $HOME", "1234\n2345\napp\n/home/app\n"},
		{"echo $GREETING; echo $SHARED", "from the image\nspec\n"},
		{"echo mine > mine && rm kept && cat mine && ls", "mine\nmine\nopq\noverride\n"},
	} {
		if res := sh(t, inst, c.script); res.ExitCode != 0 || res.Stdout != c.want {
			t.Errorf("%q: exit %d, stdout %q (want %q), stderr %q", c.script, res.ExitCode, res.Stdout, c.want, res.Stderr)
		}
	}
	// The writes are the sandbox's: the store's layers are unchanged.
	if _, err := os.Stat(filepath.Join(base.Dir, "srv", "kept")); err != nil {
		t.Errorf("the sandbox's rm reached the base layer: %v", err)
	}
	for _, d := range []string{base.Dir, top.Dir} {
		if _, err := os.Lstat(filepath.Join(d, "srv", "mine")); err == nil {
			t.Errorf("the sandbox's write reached layer %s", d)
		}
	}
	// A second sandbox of the same layers sees the image as it was.
	cfg2 := e.config()
	cfg2.Template = cfg.Template
	if res := sh(t, e.create(cfg2), "ls"); res.Stdout != "kept\nopq\noverride\n" {
		t.Errorf("second sandbox sees %q %q", res.Stdout, res.Stderr)
	}
}
