package disk

import (
	"fmt"
	"strconv"

	"github.com/paddockhq/paddock/internal/errs"
)

// Layer is one sandbox's writable directory.
type Layer struct {
	ID  string
	Dir string // host path, owned by the sandbox's root uid/gid, mode 0700
}

// Usage is what a layer consumes.
type Usage struct {
	Bytes, Inodes           int64
	BytesLimit, InodesLimit int64
}

// Store creates and removes layers.
type Store interface {
	// Kind is "xfs" or "tmpfs".
	Kind() string
	// Create makes the layer for id with the given quotas, owned by uid/gid.
	Create(id string, bytes, inodes int64, uid, gid int) (*Layer, error)
	// Get returns an existing layer (after a restart).
	Get(id string) (*Layer, error)
	// Usage reads a layer's consumption.
	Usage(id string) (Usage, error)
	// Remove deletes the layer and everything in it; a missing layer is not
	// an error. It must not follow symlinks out of the layer.
	Remove(id string) error
	// List returns the ids of every layer, for the orphan sweep.
	List() ([]string, error)
	// Close unmounts what the store mounted (the XFS image); layers persist.
	Close() error
}

// Options configure OpenXFS (and Open).
type Options struct {
	Dir       string // where the store lives: Dir/layers.img, mounted at Dir/mnt
	ImageSize int64  // size of the sparse image (the ceiling for all layers together)
}

// MaxIDLen is the longest layer id accepted.
const MaxIDLen = 64

// validID reports whether id matches [a-z0-9_-]{1,64}. The alphabet has no
// '/', '.' or NUL, so an id is always exactly one path component that is
// neither "." nor "..": a hostile id such as "../x" can never name anything
// outside the store's directory (path traversal, CWE-22).
func validID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// checkID returns an invalid-argument error for a bad id.
func checkID(id string) error {
	if !validID(id) {
		return fmt.Errorf("disk: %w", errs.Invalid("invalid layer id %q: want 1-%d characters of [a-z0-9_-]", truncate(id, MaxIDLen+8), MaxIDLen))
	}
	return nil
}

// checkLimits validates the quota arguments of Create. A zero limit means
// "unlimited" to both XFS quotas and tmpfs, so it is refused: every layer
// must be bounded.
func checkLimits(bytes, inodes int64, uid, gid int) error {
	switch {
	case bytes <= 0:
		return fmt.Errorf("disk: %w", errs.Invalid("disk quota must be positive, got %d bytes", bytes))
	case inodes <= 0:
		return fmt.Errorf("disk: %w", errs.Invalid("inode quota must be positive, got %d", inodes))
	case inodes > maxInodes:
		return fmt.Errorf("disk: %w", errs.Invalid("inode quota %d exceeds the maximum %d", inodes, int64(maxInodes)))
	case uid < 0 || int64(uid) > maxID || gid < 0 || int64(gid) > maxID:
		return fmt.Errorf("disk: %w", errs.Invalid("invalid owner %d:%d", uid, gid))
	}
	return nil
}

const (
	maxInodes = 1 << 32
	// maxID excludes (uid_t)-1, which chown(2) reads as "leave unchanged".
	maxID = 1<<32 - 2
	// maxProjects bounds the project ids the XFS store hands out (and so
	// the number of layers it can hold at once).
	maxProjects = 1 << 20
)

// parseProjID parses the target of a project record: the canonical
// decimal form of a project id in [1, maxProjects].
func parseProjID(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v < 1 || v > maxProjects || strconv.FormatUint(v, 10) != s {
		return 0, fmt.Errorf("invalid project id %q", truncate(s, 32))
	}
	return uint32(v), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
