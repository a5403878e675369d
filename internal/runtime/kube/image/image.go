// Package image builds small single-layer OCI images from files in memory
// and pushes them to a registry: the guest agent's image that the kube
// runtime's init container copies from, and the test cluster's pause and
// busybox images.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	goruntime "runtime"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// File is one entry of the layer. Mode carries the type (os.ModeDir,
// os.ModeSymlink) and the permission bits.
type File struct {
	Path     string
	Mode     os.FileMode
	Data     []byte
	Link     string // symlink target
	UID, GID int
}

// Build returns an image of one layer holding files (parents first is not
// required: entries are sorted) with config cfg, for this machine's
// architecture.
func Build(files []File, cfg v1.Config) (v1.Image, error) {
	fs := append([]File(nil), files...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range fs {
		p := path.Clean("/" + f.Path)[1:]
		if p == "" {
			return nil, fmt.Errorf("image: empty path")
		}
		h := &tar.Header{Name: p, Mode: int64(f.Mode.Perm()), Uid: f.UID, Gid: f.GID, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		switch {
		case f.Mode.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, p+"/"
		case f.Mode&os.ModeSymlink != 0:
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
		}
		if f.Mode&os.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Config = goruntime.GOARCH, "linux", cfg
	return mutate.ConfigFile(img, cf)
}

// Push uploads img to ref and returns ref pinned by digest
// (repo@sha256:...), so that what a Pod runs cannot change under it.
// insecure allows a plain-HTTP registry.
func Push(ctx context.Context, ref string, img v1.Image, insecure bool, opts ...remote.Option) (string, error) {
	var nopts []name.Option
	if insecure {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	if err := remote.Write(r, img, append([]remote.Option{remote.WithContext(ctx)}, opts...)...); err != nil {
		return "", fmt.Errorf("image: push %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return r.Context().Name() + "@" + d.String(), nil
}
