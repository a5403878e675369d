package runtime

import (
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/template"
)

func TestApplyImageDefaults(t *testing.T) {
	img := func(d *template.Defaults) *template.Template {
		return &template.Template{Name: "img", Kind: template.KindImage, Layers: []string{"/l"}, Defaults: d}
	}
	// ENV under the sandbox's own; WORKDIR cleaned; a non-root USER with
	// its passwd name and home; later image entries win, bad ones skipped.
	var gc guestapi.Config
	cfg := Config{Env: map[string]string{"SHARED": "spec"}, Template: img(&template.Defaults{
		Env:        []string{"PATH=/bin", "SHARED=image", "A=1", "A=2", "=x", "NOEQ"},
		WorkingDir: "/srv//www/", UID: 1234, GID: 2345, UserName: "app", Home: "/home/app"})}
	if err := ApplyImageDefaults(cfg, &gc); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"PATH": "/bin", "SHARED": "spec", "A": "2"}; !reflect.DeepEqual(gc.Env, want) {
		t.Errorf("env %v, want %v", gc.Env, want)
	}
	want := &guestapi.ImageDefaults{WorkDir: "/srv/www", User: &guestapi.ImageUser{UID: 1234, GID: 2345, Name: "app", Home: "/home/app"}}
	if !reflect.DeepEqual(gc.Image, want) {
		t.Errorf("image %+v, want %+v", gc.Image, want)
	}
	// A uid without a passwd entry is "user" at "/"; a relative WORKDIR
	// is not a default; root (uid 0) changes nothing.
	gc = guestapi.Config{}
	if err := ApplyImageDefaults(Config{Template: img(&template.Defaults{UID: 7, GID: 7, WorkingDir: "rel"})}, &gc); err != nil {
		t.Fatal(err)
	}
	if u := gc.Image.User; gc.Image.WorkDir != "" || u.Name != guestapi.UserUser || u.Home != "/" {
		t.Errorf("image %+v user %+v", gc.Image, u)
	}
	gc = guestapi.Config{}
	if err := ApplyImageDefaults(Config{Template: img(&template.Defaults{})}, &gc); err != nil || gc.Image != nil || gc.Env != nil {
		t.Errorf("root image: %v %+v", err, gc)
	}
	// An unresolvable USER fails the create.
	err := ApplyImageDefaults(Config{Template: img(&template.Defaults{User: "ghost", UserError: "no such user"})}, &gc)
	if errs.CodeOf(err) != errs.CodeInvalid {
		t.Errorf("unresolvable user: %v", err)
	}
	// Other templates are left alone.
	gc = guestapi.Config{Env: map[string]string{"K": "v"}}
	if err := ApplyImageDefaults(Config{Template: &template.Template{Name: "host", Root: "/"}}, &gc); err != nil || gc.Image != nil || len(gc.Env) != 1 {
		t.Errorf("host template: %v %+v", err, gc)
	}
}
