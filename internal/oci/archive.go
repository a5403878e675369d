package oci

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
)

// Archive kinds OpenArchive recognises.
const (
	KindDockerSave = "docker-save"
	KindOCILayout  = "oci-layout"
	KindOCIArchive = "oci-archive"
)

// annotation holding a layout entry's tag.
const refNameAnnotation = "org.opencontainers.image.ref.name"

const (
	maxArchiveEntries = 1 << 16
	maxIndexBytes     = 4 << 20
)

// Archive is an image read from a file or directory; Close removes what
// opening it unpacked.
type Archive struct {
	Kind  string
	Image *Image
	tmp   string
}

// Close releases the archive's temporary files.
func (a *Archive) Close() error {
	if a.tmp != "" {
		return os.RemoveAll(a.tmp)
	}
	return nil
}

// OpenArchive opens a `docker save` tarball, an oci-archive (a tar of an
// OCI layout) or an OCI layout directory. With several images inside,
// tag ("name:tag" for docker save, the ref.name annotation for OCI)
// chooses one; an OCI index resolves to the client's platform. Blobs of
// an OCI layout are verified against their digests as they are read;
// docker-save layers (which have none) against the config's diff ids.
// tmpDir receives an oci-archive's unpacked blobs.
func (c *Client) OpenArchive(p, tag, tmpDir string) (*Archive, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "cannot open the image archive")
	}
	if fi.IsDir() {
		img, err := c.fromLayout(p, tag)
		if err != nil {
			return nil, err
		}
		return &Archive{Kind: KindOCILayout, Image: img}, nil
	}
	kind, err := sniffArchive(p)
	if err != nil {
		return nil, err
	}
	if kind == KindDockerSave {
		var t *name.Tag
		if tag != "" {
			tt, err := name.NewTag(tag)
			if err != nil {
				return nil, errs.Wrap(errs.CodeInvalid, err, "invalid tag %s", quoteRef(tag))
			}
			t = &tt
		}
		v, err := tarball.ImageFromPath(p, t)
		if err != nil {
			return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read the docker-save archive: %s", firstLine(err.Error()))
		}
		img, err := c.validate("archive:"+filepath.Base(p), v, true)
		if err != nil {
			return nil, asInvalid(err, "the docker-save archive")
		}
		return &Archive{Kind: kind, Image: img}, nil
	}
	dir, err := os.MkdirTemp(tmpDir, "oci-archive-")
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot unpack the oci-archive")
	}
	if err := unpackLayoutTar(p, dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	img, err := c.fromLayout(dir, tag)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Archive{Kind: kind, Image: img, tmp: dir}, nil
}

// sniffArchive reads the tar's entry names: oci-layout marks an OCI
// archive (Docker 25+ writes both, and OCI blobs carry digests);
// manifest.json alone a docker-save one.
func sniffArchive(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", errs.Wrap(errs.CodeInvalid, err, "cannot open the image archive")
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var manifest bool
	for n := 0; n < maxArchiveEntries; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", errs.Wrap(errs.CodeInvalid, err, "the image archive is not a tar file")
		}
		switch path.Clean(h.Name) {
		case "oci-layout":
			return KindOCIArchive, nil
		case "manifest.json":
			manifest = true
		}
	}
	if manifest {
		return KindDockerSave, nil
	}
	return "", errs.Invalid("the file is neither a docker-save archive nor an oci-archive (no manifest.json or oci-layout)")
}

// unpackLayoutTar copies the layout's own files (oci-layout, index.json,
// blobs/<alg>/<hex>) out of the tar into dir, by name: nothing else in the
// archive is written, and names are never resolved against the disk, so
// no entry can land outside dir (path traversal class).
func unpackLayoutTar(p, dir string) error {
	f, err := os.Open(p)
	if err != nil {
		return errs.Wrap(errs.CodeInvalid, err, "cannot open the image archive")
	}
	defer f.Close()
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o700); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot unpack the oci-archive")
	}
	tr := tar.NewReader(f)
	for n := 0; ; n++ {
		if n > maxArchiveEntries {
			return errs.New(errs.CodeTooLarge, "the oci-archive has over %d entries", maxArchiveEntries)
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errs.Wrap(errs.CodeInvalid, err, "the oci-archive is not a valid tar file")
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		clean := path.Clean(strings.TrimPrefix(h.Name, "./"))
		var dst string
		switch {
		case clean == "oci-layout" || clean == "index.json":
			if h.Size > maxIndexBytes {
				return errs.New(errs.CodeTooLarge, "the oci-archive's %s is too large", clean)
			}
			dst = filepath.Join(dir, clean)
		case strings.HasPrefix(clean, "blobs/sha256/") && layers.ValidHex(strings.TrimPrefix(clean, "blobs/sha256/")):
			dst = filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(clean, "blobs/sha256/"))
		default:
			continue
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return errs.Invalid("the oci-archive holds %s twice", clean)
			}
			return errs.Wrap(errs.CodeInternal, err, "cannot unpack the oci-archive")
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return errs.Wrap(errs.CodeInternal, err, "cannot unpack the oci-archive")
		}
	}
}

// fromLayout picks the image of an OCI layout.
func (c *Client) fromLayout(dir, tag string) (*Image, error) {
	if fi, err := os.Stat(filepath.Join(dir, "index.json")); err != nil || fi.Size() > maxIndexBytes {
		return nil, errs.Invalid("not an OCI image layout (index.json missing or too large)")
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "not an OCI image layout")
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read the layout's index.json")
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read the layout's index.json")
	}
	var picked []v1.Descriptor
	for _, d := range m.Manifests {
		if tag == "" || d.Annotations[refNameAnnotation] == tag || strings.HasSuffix(d.Annotations["io.containerd.image.name"], ":"+tag) {
			picked = append(picked, d)
		}
	}
	switch {
	case len(picked) == 0 && tag != "":
		return nil, errs.NotFound("the layout has no image tagged %s", quoteRef(tag))
	case len(picked) == 0:
		return nil, errs.Invalid("the layout holds no image")
	case len(picked) > 1:
		return nil, errs.Invalid("the layout holds %d images: name one with its tag", len(picked))
	}
	d := picked[0]
	var v v1.Image
	switch d.MediaType {
	case types.OCIImageIndex, types.DockerManifestList:
		sub, err := idx.ImageIndex(d.Digest)
		if err != nil {
			return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read a nested index")
		}
		if v, err = c.pickPlatform("in the layout", sub, func(err error) error { return asInvalid(err, "the layout") }); err != nil {
			return nil, err
		}
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
		if v, err = idx.Image(d.Digest); err != nil {
			return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read the image manifest")
		}
	default:
		return nil, errs.Invalid("unsupported manifest media type %s", quoteRef(string(d.MediaType)))
	}
	raw, err := v.RawManifest()
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read the image manifest")
	}
	if h, _, _ := v1.SHA256(strings.NewReader(string(raw))); h != d.Digest {
		return nil, errs.Invalid("the layout's manifest does not match its digest %s", short(d.Digest.String()))
	}
	img, err := c.validate(fmt.Sprintf("layout:%s", d.Digest.String()[:19]), v, false)
	if err != nil {
		return nil, asInvalid(err, "the layout")
	}
	return img, nil
}

func asInvalid(err error, what string) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	return errs.Wrap(errs.CodeInvalid, err, "cannot read %s: %s", what, firstLine(err.Error()))
}
