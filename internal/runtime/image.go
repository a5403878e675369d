package runtime

import (
	"path"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/template"
)

// ApplyImageDefaults puts an image template's config into the agent's:
// its ENV under the sandbox's own environment (cfg.Env wins), its WORKDIR
// and a non-root USER as the commands' defaults. Every backend that runs
// image templates calls it, so a sandbox sees the same defaults on each.
// Other templates, and images without a config, leave gc as it is.
func ApplyImageDefaults(cfg Config, gc *guestapi.Config) error {
	t := cfg.Template
	if t == nil || t.Kind != template.KindImage || t.Defaults == nil {
		return nil
	}
	d := t.Defaults
	if d.UserError != "" {
		return errs.Invalid("template %s: its image's USER cannot be used: %s", t.Name, d.UserError)
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
	return nil
}

// imageEnv turns an image's KEY=VALUE list into a map, later entries
// winning, skipping what a sandbox's environment could not hold.
func imageEnv(list []string) map[string]string {
	out := map[string]string{}
	for _, kv := range list {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				if i > 0 {
					out[kv[:i]] = kv[i+1:]
				}
				break
			}
		}
	}
	return out
}
