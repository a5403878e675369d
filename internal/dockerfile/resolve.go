package dockerfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/template"
)

// Resolver resolves FROM against the server's templates first (imported
// images and earlier builds are templates too), then a registry.
// "FROM python" therefore means the template "python" when there is
// one; write "docker.io/library/python" to force the registry.
type Resolver struct {
	Templates *template.Registry
	Client    *oci.Client // nil: registry images are refused
	Store     *layers.Store
	Limits    layers.Limits
}

// Resolve implements BaseResolver.
func (r *Resolver) Resolve(ctx context.Context, ref string, lease *layers.Lease) (Base, error) {
	if r.Templates != nil && template.ValidName(ref) {
		ls, cfg, err := r.Templates.ImageConfig(ref)
		switch {
		case err == nil:
			ids := make([]string, len(ls))
			for i, l := range ls {
				ids[i] = l.DiffID
			}
			if err := lease.Hold(ids...); err != nil {
				return Base{}, err
			}
			raw, _ := json.Marshal(cfg)
			h := sha256.New()
			for _, id := range ids {
				h.Write([]byte(id))
			}
			h.Write(raw)
			return Base{Layers: ls, Config: *cfg, ID: "template:" + ref + "@sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
		case errs.CodeOf(err) != errs.CodeNotFound:
			return Base{}, err
		}
	}
	if r.Client == nil {
		return Base{}, errs.NotFound("base %q is not a template, and this builder cannot pull images", ref)
	}
	img, err := r.Client.Pull(ctx, ref)
	if err != nil {
		return Base{}, err
	}
	ls, err := r.Client.Unpack(ctx, img, r.Store, lease, oci.UnpackOptions{Limits: r.Limits})
	if err != nil {
		return Base{}, err
	}
	return Base{Layers: ls, Config: *img.Config, ID: img.Digest}, nil
}
