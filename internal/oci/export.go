package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/klauspost/compress/gzip"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
)

// Export is an image assembled from store layers; its compressed layer
// blobs live in a temporary directory until Close.
type Export struct {
	Image v1.Image
	tmp   string
}

// Close removes the export's temporary blobs.
func (e *Export) Close() error { return os.RemoveAll(e.tmp) }

// StoreImage assembles an OCI image from layers (bottom first) and cfg.
// Each layer is written as its canonical tar (layers.WriteTar) and
// gzipped once into tmpDir; the config's diff ids are set to those tars'
// digests (the same as the store's for layers Paddock built; a pulled
// layer's original tar bytes are not kept, so its diff id may change).
func StoreImage(ctx context.Context, ls []layers.Layer, cfg v1.ConfigFile, tmpDir string) (*Export, error) {
	tmp, err := os.MkdirTemp(tmpDir, "export-")
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot create an export directory")
	}
	ex := &Export{tmp: tmp}
	var adds []mutate.Addendum
	var diffIDs []v1.Hash
	for _, l := range ls {
		if err := ctx.Err(); err != nil {
			ex.Close()
			return nil, err
		}
		sl, err := materialize(l.Dir, tmp)
		if err != nil {
			ex.Close()
			return nil, err
		}
		adds = append(adds, mutate.Addendum{Layer: sl, MediaType: types.OCILayer})
		diffIDs = append(diffIDs, sl.diffID)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, adds...)
	if err != nil {
		ex.Close()
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot assemble the image")
	}
	cfg.RootFS = v1.RootFS{Type: "layers", DiffIDs: diffIDs}
	if nonEmpty(cfg.History) != len(diffIDs) {
		cfg.History = nil // it would no longer describe the layers
	}
	if img, err = mutate.ConfigFile(img, &cfg); err != nil {
		ex.Close()
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot assemble the image")
	}
	ex.Image = img
	return ex, nil
}

func nonEmpty(h []v1.History) int {
	n := 0
	for _, e := range h {
		if !e.EmptyLayer {
			n++
		}
	}
	return n
}

// storeLayer is a layer blob materialised from the store.
type storeLayer struct {
	diffID, digest v1.Hash
	size           int64
	path           string
}

func materialize(dir, tmp string) (*storeLayer, error) {
	f, err := os.CreateTemp(tmp, "layer-*.tar.gz")
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot write a layer blob")
	}
	defer f.Close()
	zh, th := sha256.New(), sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, zh)}
	zw, _ := gzip.NewWriterLevel(cw, gzip.DefaultCompression)
	if err := layers.WriteTar(io.MultiWriter(zw, th), dir, layers.TarOptions{}); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot write a layer blob")
	}
	if err := f.Sync(); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot write a layer blob")
	}
	return &storeLayer{
		diffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(th.Sum(nil))},
		digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(zh.Sum(nil))},
		size:   cw.n,
		path:   f.Name(),
	}, nil
}

func (l *storeLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *storeLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *storeLayer) Size() (int64, error)                { return l.size, nil }
func (l *storeLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }
func (l *storeLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }
func (l *storeLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, f}, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteOCIArchive writes img as an oci-archive (a tar of an OCI image
// layout) with refName as its ref.name annotation.
func WriteOCIArchive(w io.Writer, img v1.Image, refName string) error {
	raw, err := img.RawManifest()
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
	}
	m, err := img.Manifest()
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
	}
	dg, _ := img.Digest()
	mt, _ := img.MediaType()
	desc := v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: dg}
	if refName != "" {
		desc.Annotations = map[string]string{refNameAnnotation: refName}
	}
	index, _ := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{desc}})
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	file := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		n, err := io.Copy(tw, r)
		if err == nil && n != size {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
	}
	layout := []byte(`{"imageLayoutVersion":"1.0.0"}`)
	steps := []func() error{
		func() error { return file("oci-layout", int64(len(layout)), bytes.NewReader(layout)) },
		func() error { return file("index.json", int64(len(index)), bytes.NewReader(index)) },
		func() error { return dir("blobs/") },
		func() error { return dir("blobs/sha256/") },
		func() error { return file("blobs/sha256/"+m.Config.Digest.Hex, int64(len(cfg)), bytes.NewReader(cfg)) },
		func() error { return file("blobs/sha256/"+dg.Hex, int64(len(raw)), bytes.NewReader(raw)) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
		}
	}
	ls, err := img.Layers()
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
	}
	for i, l := range ls {
		rc, err := l.Compressed()
		if err != nil {
			return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
		}
		err = file("blobs/sha256/"+m.Layers[i].Digest.Hex, m.Layers[i].Size, rc)
		rc.Close()
		if err != nil {
			return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
		}
	}
	if err := tw.Close(); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot export the image")
	}
	return nil
}

// Push uploads img to refStr.
func (c *Client) Push(ctx context.Context, refStr string, img v1.Image) error {
	ref, err := ParseRef(refStr)
	if err != nil {
		return err
	}
	if err := remote.Write(ref, img, c.remoteOpts(ctx)...); err != nil {
		return registryError(ref, err)
	}
	return nil
}
