package oci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
)

// ErrBlobDigest is the cause when a blob does not hash to its digest or
// has another size than its descriptor says.
var ErrBlobDigest = errors.New("blob does not match its descriptor")

// Event reports unpack progress.
type Event struct {
	Layer  int    // index in the image
	DiffID string // the layer's diff id
	Cached bool   // already in the store: nothing fetched
	Done   bool
}

// UnpackOptions configure Unpack.
type UnpackOptions struct {
	Limits   layers.Limits // per layer
	Progress func(Event)   // called from several goroutines
	Jobs     int           // layers fetched at once; default the client's
}

// zstd window bound: a frame may ask the decoder for up to 8 GiB of
// window memory (memory-exhaustion class).
const maxZstdWindow = 128 << 20

// Unpack puts every layer of img that the store lacks into it, holding
// all of them in lease, and returns them bottom first. On error the
// layers already stored stay held by lease only: releasing it makes them
// collectable, so nothing half-made remains.
func (c *Client) Unpack(ctx context.Context, img *Image, st *layers.Store, lease *layers.Lease, o UnpackOptions) ([]layers.Layer, error) {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = c.o.Jobs
	}
	return unpack(ctx, img, st, lease, o, jobs)
}

func unpack(ctx context.Context, img *Image, st *layers.Store, lease *layers.Lease, o UnpackOptions, jobs int) ([]layers.Layer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	v1layers, err := img.img.Layers()
	if err != nil {
		return nil, errs.Wrap(errs.CodeUnavailable, err, "cannot list the image's layers")
	}
	if len(v1layers) != len(img.Layers) {
		return nil, errs.New(errs.CodeInvalid, "the image changed while it was read")
	}
	out := make([]layers.Layer, len(img.Layers))
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
	for i := range img.Layers {
		d := img.Layers[i]
		if l, ok := st.Get(d.DiffID); ok && lease.Hold(d.DiffID) == nil {
			out[i] = l
			if o.Progress != nil {
				o.Progress(Event{Layer: i, DiffID: d.DiffID, Cached: true, Done: true})
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				fail(ctx.Err())
				return
			}
			defer func() { <-sem }()
			l, err := fetchLayer(ctx, img, v1layers[i], d, st, lease, o.Limits)
			if err != nil {
				fail(err)
				return
			}
			out[i] = l
			if o.Progress != nil {
				o.Progress(Event{Layer: i, DiffID: d.DiffID, Done: true})
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

type layerReader interface {
	Compressed() (io.ReadCloser, error)
	Uncompressed() (io.ReadCloser, error)
}

func fetchLayer(ctx context.Context, img *Image, l layerReader, d LayerDesc, st *layers.Store, lease *layers.Lease, lim layers.Limits) (layers.Layer, error) {
	var tarStream io.Reader
	if img.archived {
		// docker save stores plain tars: no compressed digest exists and
		// go-containerregistry would gzip them just to compute one. The
		// diff id (checked by the store) is the verification.
		rc, err := l.Uncompressed()
		if err != nil {
			return layers.Layer{}, errs.Wrap(errs.CodeInvalid, err, "cannot read layer %s from the archive", short(d.DiffID))
		}
		defer rc.Close()
		tarStream = rc
	} else {
		rc, err := l.Compressed()
		if err != nil {
			return layers.Layer{}, blobError(d, err)
		}
		defer rc.Close()
		vr, err := newVerifier(rc, d.Digest, d.Size)
		if err != nil {
			return layers.Layer{}, err
		}
		dec, closeDec, err := decompressor(vr, d.MediaType)
		if err != nil {
			return layers.Layer{}, err
		}
		defer closeDec()
		tarStream = dec
	}
	got, err := st.Put(ctx, lease, d.DiffID, tarStream, lim)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return layers.Layer{}, err
		}
		return layers.Layer{}, blobError(d, err)
	}
	return got, nil
}

func decompressor(r io.Reader, mt string) (io.Reader, func(), error) {
	switch mt {
	case "application/vnd.oci.image.layer.v1.tar", "application/vnd.docker.image.rootfs.diff.tar":
		return r, func() {}, nil
	case "application/vnd.oci.image.layer.v1.tar+zstd":
		zr, err := zstd.NewReader(r, zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, errs.Wrap(errs.CodeInvalid, err, "layer is not valid zstd")
		}
		return zr, zr.Close, nil
	default: // gzip media types
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, blobOrFormat(err, "layer is not valid gzip")
		}
		return zr, func() { zr.Close() }, nil
	}
}

func blobOrFormat(err error, msg string) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	return errs.Wrap(errs.CodeInvalid, err, "%s", msg)
}

func blobError(d LayerDesc, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.CodeUnavailable, err, "fetching layer %s was cancelled", short(d.DiffID))
	}
	// go-containerregistry checks Content-Length against the descriptor
	// itself, with an untyped error.
	if m := err.Error(); strings.Contains(m, "does not match expected size") || strings.Contains(m, "unexpected digest") {
		return errs.Wrap(errs.CodeInvalid, fmt.Errorf("%w: %v", ErrBlobDigest, err), "blob %s refused: its size or digest is not what the manifest says", short(d.Digest))
	}
	return errs.Wrap(errs.CodeUnavailable, err, "cannot fetch layer %s", short(d.Digest))
}

// verifier hashes a blob and, at its end, fails unless it matched the
// descriptor's digest and size; past the size it fails at once (a blob
// longer than declared is refused before it is all read).
type verifier struct {
	r    io.Reader
	h    hash.Hash
	want string
	size int64
	n    int64
}

func newVerifier(r io.Reader, digest string, size int64) (*verifier, error) {
	if len(digest) != 71 || digest[:7] != "sha256:" {
		return nil, errs.New(errs.CodeUnsupported, "only sha256 blob digests are supported")
	}
	return &verifier{r: r, h: sha256.New(), want: digest, size: size}, nil
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.size >= 0 && v.n > v.size {
		return 0, v.mismatch("longer than its descriptor says")
	}
	if err == io.EOF {
		if v.size >= 0 && v.n != v.size {
			return n, v.mismatch("shorter than its descriptor says")
		}
		if got := "sha256:" + hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			return n, v.mismatch("content hashes to " + got[:19])
		}
	}
	return n, err
}

func (v *verifier) mismatch(detail string) error {
	return errs.Wrap(errs.CodeInvalid, ErrBlobDigest, "blob %s refused: %s", short(v.want), detail)
}

func short(id string) string {
	if len(id) > 19 {
		return id[:19]
	}
	return id
}
