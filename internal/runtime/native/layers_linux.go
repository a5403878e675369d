//go:build linux

package native

import (
	"fmt"
	"path"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/template"
)

// maxImageLayers bounds an image template's stack: internal/oci refuses
// images of more than 127 layers; a build may add one.
const maxImageLayers = 128

// stagesOf is how many staging points (one id-mapped tree each) the
// sandbox's template needs.
func stagesOf(t *template.Template) (int, error) {
	if t.Kind == template.KindImage {
		if len(t.Layers) == 0 || len(t.Layers) > maxImageLayers {
			return 0, errs.Invalid("template %s has %d layers: want 1 to %d", t.Name, len(t.Layers), maxImageLayers)
		}
		return len(t.Layers), nil
	}
	if len(t.Overlays)+1 > maxOverlays {
		return 0, fmt.Errorf("template %s has too many layers", t.Name)
	}
	return len(t.Overlays) + 1, nil
}

// templateLowers returns the host trees to attach at the staging points,
// in order, and tells the guest how to stack them. An image template's
// layers (top first) all become lowers of one overlay at "/", with the
// sandbox's writable layer as its upper: nothing is copied at create.
// Its config's defaults go to the guest too: ENV under the sandbox's own
// environment, WORKDIR and a non-root USER as the commands' defaults.
func templateLowers(cfg runtime.Config, gc *guestapi.Config) ([]string, error) {
	t := cfg.Template
	if t.Kind != template.KindImage {
		lowers := []string{t.Root}
		for i, o := range t.Overlays {
			gc.Overlays = append(gc.Overlays, guestapi.Overlay{Path: o.Path, Lower: guestStage(i + 1)})
			lowers = append(lowers, o.Source)
		}
		return lowers, nil
	}
	gc.RootLower = ""
	for i := range t.Layers {
		gc.RootLowers = append(gc.RootLowers, guestStage(i))
	}
	d := t.Defaults
	if d == nil {
		return t.Layers, nil
	}
	if d.UserError != "" {
		return nil, errs.Invalid("template %s: its image's USER cannot be used: %s", t.Name, d.UserError)
	}
	img := &guestapi.ImageDefaults{}
	if path.IsAbs(d.WorkingDir) {
		img.WorkDir = path.Clean(d.WorkingDir)
	}
	if d.UID > 0 {
		img.User = &guestapi.ImageUser{UID: uint32(d.UID), GID: uint32(d.GID), Name: d.UserName, Home: d.Home}
		if img.User.Name == "" {
			img.User.Name = guestapi.UserUser
		}
		if img.User.Home == "" {
			img.User.Home = "/"
		}
	}
	if img.WorkDir != "" || img.User != nil {
		gc.Image = img
	}
	if env := imageEnv(d.Env); len(env) > 0 {
		for k, v := range cfg.Env {
			env[k] = v
		}
		gc.Env = env
	}
	return t.Layers, nil
}

// imageEnv turns an image's KEY=VALUE list into a map, later entries
// winning, skipping what a sandbox's environment could not hold.
func imageEnv(list []string) map[string]string {
	out := map[string]string{}
	for _, kv := range list {
		k, v, ok := splitEnv(kv)
		if ok {
			out[k] = v
		}
	}
	return out
}

func splitEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			if i == 0 {
				return "", "", false
			}
			return kv[:i], kv[i+1:], true
		}
	}
	return "", "", false
}
