package layers

import (
	"context"
	"errors"
	"strconv"
	"syscall"

	"github.com/paddockhq/paddock/internal/errs"
)

// Reasons a layer is refused. They are the causes of the errs.Error that
// Extract returns, so callers and tests match them with errors.Is.
var (
	ErrUnsafePath    = errors.New("path leaves the layer (absolute or ..)")
	ErrSymlinkPath   = errors.New("path goes through a symlink")
	ErrHardlink      = errors.New("hardlink target is not an earlier file of this layer")
	ErrDevice        = errors.New("device node")
	ErrDuplicate     = errors.New("duplicate entry")
	ErrTooLarge      = errors.New("layer over its size limit")
	ErrTooMany       = errors.New("too many entries")
	ErrOverlayXattr  = errors.New("overlayfs attribute in a layer")
	ErrEntryType     = errors.New("unsupported entry type")
	ErrBadArchive    = errors.New("not a valid tar archive")
	ErrDigest        = errors.New("digest mismatch")
	ErrStoreFull     = errors.New("layer store full")
	ErrLayerNotFound = errors.New("layer not in the store")
)

// refuse builds the public error for a hostile or broken entry. Entry
// names come from the image, never from the host, so they may be shown.
func refuse(code errs.Code, reason error, name, detail string) error {
	msg := "layer refused: " + reason.Error()
	if name != "" {
		msg += ": " + quote(name)
	}
	if detail != "" {
		msg += " (" + detail + ")"
	}
	return &errs.Error{Code: code, Msg: msg, Cause: reason}
}

// quote bounds and quotes an entry name for a message.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// readOrWriteError classifies an error from reading a layer stream or
// writing its files.
func readOrWriteError(name string, err error) error {
	var e *errs.Error
	if errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return errs.Wrap(errs.CodeLimit, err, "layer refused: the server's disk is full")
	}
	return refuse(errs.CodeInvalid, ErrBadArchive, name, err.Error())
}
