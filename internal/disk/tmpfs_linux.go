//go:build linux

package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

// maxUnmounts bounds the unmount loop of Remove (mounts can be stacked).
const maxUnmounts = 16

// tmpfsStore mounts one size-limited tmpfs per layer at dir/<id>.
type tmpfsStore struct {
	dir string // absolute, symlinks resolved

	ops    sync.RWMutex
	closed bool
	rootFd int

	mu   sync.Mutex
	busy map[string]bool
}

// OpenTmpfs returns the fallback store rooted at dir. Each layer is a tmpfs
// mounted at dir/<id> with size= and nr_inodes= limits; its pages are
// charged to the memory cgroup of whoever writes them (the sandbox).
func OpenTmpfs(dir string) (Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("disk: %w", errs.Invalid("store directory not set"))
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return nil, fmt.Errorf("disk: create %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("disk: resolve %s: %w", dir, err)
	}
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("disk: open %s: %w", abs, err)
	}
	return &tmpfsStore{dir: abs, rootFd: fd, busy: map[string]bool{}}, nil
}

func (s *tmpfsStore) Kind() string { return "tmpfs" }

func (s *tmpfsStore) path(id string) string { return filepath.Join(s.dir, id) }

func (s *tmpfsStore) begin(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	s.ops.RLock()
	if s.closed {
		s.ops.RUnlock()
		return fmt.Errorf("disk: %w", errs.New(errs.CodeUnavailable, "disk store is closed"))
	}
	return nil
}

func (s *tmpfsStore) end() { s.ops.RUnlock() }

func (s *tmpfsStore) lock(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[id] {
		return fmt.Errorf("disk: %w", errs.New(errs.CodeConflict, "layer %s is busy", id))
	}
	s.busy[id] = true
	return nil
}

func (s *tmpfsStore) unlock(id string) {
	s.mu.Lock()
	delete(s.busy, id)
	s.mu.Unlock()
}

// mounted reports whether dir/<id> is a tmpfs mount point.
func (s *tmpfsStore) mounted(id string) (bool, error) {
	ms, err := readMountinfo()
	if err != nil {
		return false, err
	}
	m, ok := topMount(ms, s.path(id))
	return ok && m.FSType == "tmpfs", nil
}

func (s *tmpfsStore) Create(id string, bytes, inodes int64, uid, gid int) (*Layer, error) {
	if err := s.begin(id); err != nil {
		return nil, err
	}
	defer s.end()
	if err := checkLimits(bytes, inodes, uid, gid); err != nil {
		return nil, err
	}
	if err := s.lock(id); err != nil {
		return nil, err
	}
	defer s.unlock(id)

	if err := unix.Mkdirat(s.rootFd, id, 0o700); err != nil {
		if !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("disk: create layer %s: mkdir: %w", id, err)
		}
		// A directory left by a crash between mkdir and mount is reused
		// only if nothing is mounted on it.
		if m, err := s.mounted(id); err != nil || m {
			return nil, fmt.Errorf("disk: %w", errs.New(errs.CodeConflict, "layer %s already exists", id))
		}
	}
	// The tmpfs's own root carries the owner and mode; the mount point
	// underneath stays root-owned 0700.
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d", bytes, inodes, uid, gid)
	if err := unix.Mount("tmpfs", s.path(id), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		_ = unix.Unlinkat(s.rootFd, id, unix.AT_REMOVEDIR)
		return nil, fmt.Errorf("disk: create layer %s: mount tmpfs (%s): %w", id, opts, err)
	}
	return &Layer{ID: id, Dir: s.path(id)}, nil
}

func (s *tmpfsStore) Get(id string) (*Layer, error) {
	if err := s.begin(id); err != nil {
		return nil, err
	}
	defer s.end()
	m, err := s.mounted(id)
	if err != nil {
		return nil, fmt.Errorf("disk: %w", err)
	}
	if !m {
		return nil, fmt.Errorf("disk: %w", errs.NotFound("layer %s not found", id))
	}
	return &Layer{ID: id, Dir: s.path(id)}, nil
}

func (s *tmpfsStore) Usage(id string) (Usage, error) {
	if err := s.begin(id); err != nil {
		return Usage{}, err
	}
	defer s.end()
	fd, err := openDirAt(s.rootFd, id)
	if errors.Is(err, unix.ENOENT) {
		return Usage{}, fmt.Errorf("disk: %w", errs.NotFound("layer %s not found", id))
	}
	if err != nil {
		return Usage{}, fmt.Errorf("disk: layer %s: %w", id, err)
	}
	defer unix.Close(fd)
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return Usage{}, fmt.Errorf("disk: layer %s: statfs: %w", id, err)
	}
	if sfs.Type != unix.TMPFS_MAGIC {
		return Usage{}, fmt.Errorf("disk: %w", errs.NotFound("layer %s not found (not mounted)", id))
	}
	bs := int64(sfs.Bsize) // int32 on some 32-bit ABIs
	return Usage{
		Bytes:       int64(sfs.Blocks-sfs.Bfree) * bs,
		Inodes:      int64(sfs.Files - sfs.Ffree),
		BytesLimit:  int64(sfs.Blocks) * bs,
		InodesLimit: int64(sfs.Files),
	}, nil
}

// Remove detaches the layer's tmpfs (its contents go with it, whatever
// they are) and removes the mount point, without following anything a
// sandbox could have planted.
func (s *tmpfsStore) Remove(id string) error {
	if err := s.begin(id); err != nil {
		return err
	}
	defer s.end()
	if err := s.lock(id); err != nil {
		return err
	}
	defer s.unlock(id)
	p := s.path(id)
	for i := 0; ; i++ {
		// UMOUNT_NOFOLLOW: never unmount wherever a symlink would point.
		err := unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			break // nothing (more) mounted there
		}
		if err != nil {
			return fmt.Errorf("disk: remove layer %s: unmount: %w", id, err)
		}
		if i == maxUnmounts {
			return fmt.Errorf("disk: remove layer %s: still mounted after %d unmounts", id, maxUnmounts)
		}
	}
	id0, err := identOf(s.rootFd)
	if err != nil {
		return fmt.Errorf("disk: remove layer %s: %w", id, err)
	}
	if err := removeTree(s.rootFd, id, id0.mountIdent); err != nil {
		return fmt.Errorf("disk: remove layer %s: %w", id, err)
	}
	return nil
}

func (s *tmpfsStore) List() ([]string, error) {
	s.ops.RLock()
	defer s.ops.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("disk: %w", errs.New(errs.CodeUnavailable, "disk store is closed"))
	}
	ms, err := readMountinfo()
	if err != nil {
		return nil, fmt.Errorf("disk: %w", err)
	}
	names, err := readDirNames(s.rootFd, maxProjects)
	if err != nil {
		return nil, fmt.Errorf("disk: list %s: %w", s.dir, err)
	}
	var out []string
	for _, n := range names {
		if !validID(n) {
			continue
		}
		if m, ok := topMount(ms, s.path(n)); ok && m.FSType == "tmpfs" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Close releases the store; the layers' tmpfs mounts stay (they are the
// layers).
func (s *tmpfsStore) Close() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return unix.Close(s.rootFd)
}
