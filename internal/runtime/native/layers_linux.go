//go:build linux

package native

import (
	"fmt"

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
	if err := runtime.ApplyImageDefaults(cfg, gc); err != nil {
		return nil, err
	}
	return t.Layers, nil
}
