package runtime

import (
	"context"
	"io"
	"os"

	"github.com/paddockhq/paddock/internal/errs"
)

// FSCapturer is an Instance whose filesystem changes — its writable layer
// over the template — can be read out. It is optional (CapturerOf says
// so). The caller makes the capture consistent: it pauses the instance
// (Pauser) first and resumes it after, so nothing in the sandbox writes
// while the layer is read.
//
// The capture is a tar stream (PAX) of the layer tree: directories,
// regular files, symlinks, overlay whiteouts (character devices 0/0) and
// user.* extended attributes (overlay's opaque-directory marks), with
// owners relative to the sandbox (0 is the sandbox's root, whatever host
// uid it maps to). A backend restores the same stream into a new
// sandbox's layer (Config.Layer). A file with several names is captured
// once, its other names as hard links (tar TypeLink) to the first, and
// restored linked.
type FSCapturer interface {
	CaptureFS(ctx context.Context, w io.Writer) error
}

// CapturerOf returns inst as an FSCapturer, or an unsupported error
// naming the backend.
func CapturerOf(backend string, inst Instance) (FSCapturer, error) {
	if c, ok := inst.(FSCapturer); ok {
		return c, nil
	}
	return nil, errs.New(errs.CodeUnsupported, "the %s runtime cannot snapshot sandboxes", backend)
}

// LayerSource opens a capture (FSCapturer's stream) to restore into a new
// sandbox's writable layer before anything in it runs.
type LayerSource func(ctx context.Context) (io.ReadCloser, error)

// FSRestorer is a Backend that honours Config.Layer. A backend without it
// cannot create sandboxes from snapshots (the manager refuses first).
type FSRestorer interface {
	RestoresFS() bool
}

// Out-of-band file contents of a capture stream. A regular-file entry
// with a BlobKey PAX record carries no content in the stream (its tar
// size is 0; BlobSize holds the file's): the stream's reader, which must
// then implement BlobOpener, opens the content as a host file, so that
// the backend copies it in the kernel (a restore of a large snapshot is
// one copy instead of three through user space). A backend meeting such
// an entry in a stream without a BlobOpener refuses it.
const (
	BlobKey  = "PADDOCK.blob"
	BlobSize = "PADDOCK.size"
)

// BlobOpener opens the content an entry's BlobKey names: a file of
// exactly the entry's BlobSize bytes, which the caller closes.
type BlobOpener interface {
	OpenBlob(key string) (*os.File, error)
}
