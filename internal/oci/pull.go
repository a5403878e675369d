package oci

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/errs"
)

// DefaultMaxLayers bounds an image's layer count.
const DefaultMaxLayers = 127

const maxConfigBytes = 8 << 20

// Client talks to registries.
type Client struct {
	o  Options
	tr *guardTransport
}

// New returns a Client.
func New(o Options) (*Client, error) {
	if o.MaxLayers <= 0 {
		o.MaxLayers = DefaultMaxLayers
	}
	if o.Jobs <= 0 {
		o.Jobs = 3
	}
	if o.Platform != "" {
		if _, err := parsePlatform(o.Platform); err != nil {
			return nil, err
		}
	}
	return &Client{o: o, tr: newTransport(&o)}, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.tr.close() }

// Image is an image resolved to one platform, ready to unpack.
type Image struct {
	Ref      string // what was asked for, normalised ("index.docker.io/library/debian:12")
	Digest   string // manifest digest
	Config   *v1.ConfigFile
	Layers   []LayerDesc
	img      v1.Image
	archived bool // a docker-save layer has no compressed digest to verify
}

// LayerDesc is one layer of an Image.
type LayerDesc struct {
	Digest    string // compressed blob digest ("" for docker-save layers)
	DiffID    string
	Size      int64 // compressed size (-1 when unknown)
	MediaType string
}

// V1 returns the go-containerregistry image (for Push and export).
func (i *Image) V1() v1.Image { return i.img }

func (c *Client) remoteOpts(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(c.tr),
		remote.WithAuthFromKeychain(keychain{ctx: ctx, fn: c.o.Credentials}),
		remote.WithUserAgent("paddock"),
		// Few, quick retries: an unreachable registry must fail within the
		// caller's patience, not after go-containerregistry's default
		// backoff.
		remote.WithRetryBackoff(remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 2}),
		remote.WithJobs(c.o.Jobs),
	}
}

// Pull resolves ref to an image for the client's platform and validates
// its manifest and config. Layers are fetched by Unpack.
func (c *Client) Pull(ctx context.Context, refStr string) (*Image, error) {
	ref, err := ParseRef(refStr)
	if err != nil {
		return nil, err
	}
	opts := c.remoteOpts(ctx)
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, registryError(ref, err)
	}
	var img v1.Image
	switch desc.MediaType {
	case types.OCIImageIndex, types.DockerManifestList:
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, registryError(ref, err)
		}
		img, err = c.pickPlatform(ref.String(), idx, func(err error) error { return registryError(ref, err) })
		if err != nil {
			return nil, err
		}
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
		if img, err = desc.Image(); err != nil {
			return nil, registryError(ref, err)
		}
	case types.DockerManifestSchema1, types.DockerManifestSchema1Signed:
		return nil, errs.New(errs.CodeUnsupported, "image %s uses the deprecated Docker schema 1 manifest; push it again with a current tool", quoteRef(ref.String()))
	default:
		return nil, errs.New(errs.CodeInvalid, "image %s: unsupported manifest media type %s", quoteRef(ref.String()), quoteRef(string(desc.MediaType)))
	}
	out, err := c.validate(ref.String(), img, false)
	if err != nil {
		return nil, wrapRegistry(ref, err)
	}
	return out, nil
}

func (c *Client) platform() v1.Platform {
	if c.o.Platform != "" {
		p, _ := parsePlatform(c.o.Platform)
		return *p
	}
	return hostPlatform()
}

func hostPlatform() v1.Platform {
	p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	if runtime.GOARCH == "arm64" {
		p.Variant = "v8"
	}
	return p
}

func parsePlatform(s string) (*v1.Platform, error) {
	p, err := v1.ParsePlatform(s)
	if err != nil || p.OS == "" || p.Architecture == "" {
		return nil, errs.Invalid("invalid platform %s: write it as os/arch[/variant]", quoteRef(s))
	}
	return p, nil
}

// pickPlatform chooses the index entry for the client's platform. A
// missing variant on either side matches (arm64 images often omit "v8").
func (c *Client) pickPlatform(label string, idx v1.ImageIndex, errFn func(error) error) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, errFn(err)
	}
	want := c.platform()
	var avail []string
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.OS == "unknown" {
			continue // attestations and other non-image entries
		}
		avail = append(avail, d.Platform.String())
		p := *d.Platform
		if p.OS != want.OS || p.Architecture != want.Architecture {
			continue
		}
		if p.Variant != "" && want.Variant != "" && p.Variant != want.Variant {
			continue
		}
		switch d.MediaType {
		case types.OCIManifestSchema1, types.DockerManifestSchema2:
		default:
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, errFn(err)
		}
		return img, nil
	}
	if len(avail) > 16 {
		avail = append(avail[:16], "...")
	}
	return nil, errs.NotFound("image %s has no %s variant (it has: %s)", quoteRef(label), want.String(), strings.Join(avail, ", "))
}

var layerTypes = map[types.MediaType]bool{
	types.OCILayer: true, types.OCILayerZStd: true, types.OCIUncompressedLayer: true,
	types.DockerLayer: true, types.DockerUncompressedLayer: true,
}

// validate checks an image's manifest and config (media types, counts,
// sizes, the config's own digest) and describes it.
func (c *Client) validate(refStr string, img v1.Image, archived bool) (*Image, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	switch m.MediaType {
	case "", types.OCIManifestSchema1, types.DockerManifestSchema2:
	default:
		return nil, errs.New(errs.CodeInvalid, "unsupported manifest media type %s", quoteRef(string(m.MediaType)))
	}
	switch m.Config.MediaType {
	case types.OCIConfigJSON, types.DockerConfigJSON:
	default:
		return nil, errs.New(errs.CodeInvalid, "the image config has media type %s, not an image config", quoteRef(string(m.Config.MediaType)))
	}
	if m.Config.Size <= 0 || m.Config.Size > maxConfigBytes {
		return nil, errs.New(errs.CodeInvalid, "the image config size %d is out of range", m.Config.Size)
	}
	if len(m.Layers) > c.o.MaxLayers {
		return nil, errs.New(errs.CodeLimit, "the image has %d layers; at most %d are supported", len(m.Layers), c.o.MaxLayers)
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) != m.Config.Size {
		return nil, errs.New(errs.CodeInvalid, "the image config is %d bytes, its manifest says %d", len(raw), m.Config.Size)
	}
	if h, _, _ := v1.SHA256(strings.NewReader(string(raw))); h != m.Config.Digest {
		return nil, errs.New(errs.CodeInvalid, "the image config does not match its digest %s", m.Config.Digest.String()[:19])
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "the image config is not valid JSON")
	}
	if cfg.OS != "" && cfg.OS != "linux" {
		return nil, errs.New(errs.CodeUnsupported, "the image is for %s; only linux images run in Paddock", quoteRef(cfg.OS))
	}
	if len(cfg.RootFS.DiffIDs) != len(m.Layers) {
		return nil, errs.New(errs.CodeInvalid, "the image config lists %d layers, its manifest %d", len(cfg.RootFS.DiffIDs), len(m.Layers))
	}
	dg, err := img.Digest()
	if err != nil {
		return nil, err
	}
	out := &Image{Ref: refStr, Digest: dg.String(), Config: cfg, img: img, archived: archived}
	for i, l := range m.Layers {
		if !layerTypes[l.MediaType] {
			if l.MediaType.IsDistributable() {
				return nil, errs.New(errs.CodeInvalid, "layer %d has media type %s, not a layer", i, quoteRef(string(l.MediaType)))
			}
			return nil, errs.New(errs.CodeUnsupported, "layer %d is non-distributable (%s): it cannot be pulled", i, quoteRef(string(l.MediaType)))
		}
		if !archived && (l.Size <= 0 || l.Size > 1<<40) {
			return nil, errs.New(errs.CodeInvalid, "layer %d has size %d", i, l.Size)
		}
		if cfg.RootFS.DiffIDs[i].Algorithm != "sha256" {
			return nil, errs.New(errs.CodeUnsupported, "layer %d: only sha256 diff ids are supported", i)
		}
		d := LayerDesc{DiffID: cfg.RootFS.DiffIDs[i].String(), Size: l.Size, MediaType: string(l.MediaType)}
		if !archived {
			d.Digest = l.Digest.String()
		}
		out.Layers = append(out.Layers, d)
	}
	return out, nil
}

// registryError turns a go-containerregistry error into a public one.
// Messages name the registry and the status, never a credential (none is
// ever part of a URL or of these errors).
func registryError(ref name.Reference, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	reg := quoteRef(ref.Context().RegistryStr())
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return errs.Wrap(errs.CodeUnauthenticated, err, "registry %s refused the credentials for %s", reg, quoteRef(ref.Context().RepositoryStr()))
		case http.StatusNotFound:
			return errs.Wrap(errs.CodeNotFound, err, "image %s not found", quoteRef(ref.String()))
		case http.StatusTooManyRequests:
			return errs.Wrap(errs.CodeRateLimited, err, "registry %s is rate limiting", reg)
		}
		for _, d := range te.Errors {
			switch d.Code {
			case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
				return errs.Wrap(errs.CodeUnauthenticated, err, "registry %s refused the credentials", reg)
			case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
				return errs.Wrap(errs.CodeNotFound, err, "image %s not found", quoteRef(ref.String()))
			}
		}
		return errs.Wrap(errs.CodeUnavailable, err, "registry %s answered HTTP %d", reg, te.StatusCode)
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return errs.Wrap(errs.CodeTimeout, err, "registry %s did not answer in time", reg)
	}
	if errors.Is(err, context.Canceled) {
		return errs.Wrap(errs.CodeUnavailable, err, "pull of %s was cancelled", quoteRef(ref.String()))
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return errs.Wrap(errs.CodeUnavailable, err, "registry %s is unreachable", reg)
	}
	if strings.Contains(err.Error(), "digest") || strings.Contains(err.Error(), "size") {
		return errs.Wrap(errs.CodeInvalid, err, "registry %s sent content that does not match its digest", reg)
	}
	return errs.Wrap(errs.CodeUnavailable, err, "registry %s: %s", reg, firstLine(err.Error()))
}

func wrapRegistry(ref name.Reference, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return fmt.Errorf("%w", e)
	}
	return registryError(ref, err)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
