//go:build linux

package disk

// Options configure OpenXFS.
type Options struct {
	Dir       string // where the store lives: Dir/layers.img, mounted at Dir/mnt
	ImageSize int64  // size of the sparse image (the ceiling for all layers together)
}

// OpenXFS creates (first time: sparse file + mkfs.xfs) or reuses the image,
// attaches it to a loop device (LOOP_CTL_GET_FREE + LOOP_CONFIGURE with
// autoclear), and mounts it with prjquota (or finds it already mounted, after
// a crash). Project ids are allocated per layer and recorded so they survive
// restarts.
func OpenXFS(o Options) (Store, error) { panic("helper") }

// OpenTmpfs returns the fallback store rooted at dir.
func OpenTmpfs(dir string) (Store, error) { panic("helper") }

// Open tries OpenXFS and falls back to OpenTmpfs (reporting why through
// the returned reason, for the log).
func Open(o Options) (s Store, fallbackReason error, err error) { panic("helper") }
