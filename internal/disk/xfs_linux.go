//go:build linux

package disk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
)

const (
	imageName    = "layers.img"
	mountName    = "mnt"
	projectsName = ".projects"

	// MinImageSize is the smallest image mkfs.xfs (xfsprogs 5.19+) agrees to
	// make.
	MinImageSize = 300 << 20

	mkfsTimeout   = 2 * time.Minute
	maxMkfsOutput = 4 << 10
	// Layers hold files written by sandboxes: a setuid binary or a device
	// node planted there must be inert if anything on the host touches it
	// (the planted-setuid-file escalation).
	mountFlags = unix.MS_NOSUID | unix.MS_NODEV

	// maxChargedSkips bounds the quotactl calls one Create spends on free
	// project ids that are still charged.
	maxChargedSkips = 4096
)

// xfsStore keeps layers as project-quota'd directories of an XFS image.
type xfsStore struct {
	dir, mnt, image string // absolute, symlinks resolved
	dev             string // the loop device, e.g. /dev/loop3

	// ops is held shared by every operation and exclusively by Close, so
	// the mount is never unmounted under a running Create or Remove.
	ops    sync.RWMutex
	closed bool
	rootFd int // the mounted filesystem's root directory
	projFd int // rootFd/.projects: one symlink "<id>" -> "<project id>" per layer
	ident  mountIdent
	fsSize int64 // bytes of the filesystem

	cfg xfsConfig

	mu      sync.Mutex // guards everything below and quota calls
	q       quotaOps
	records map[string]uint32 // layer id -> project id
	used    map[uint32]string // project id -> layer id
	busy    map[string]bool   // ids being created or removed
	hint    uint32            // no free project id is below this

	// failAt, set only by tests, makes Create fail after the named step to
	// exercise its undo path.
	failAt string
}

// xfsConfig holds what tests replace to run the store on a kernel whose
// XFS lacks quota support.
type xfsConfig struct {
	mountOpts string // data for mount(2); must enforce project quotas
	superOpt  string // what mountinfo's super options show for mountOpts
	quota     func(fd int, dev string) quotaOps
	// procQuota exists when the kernel's XFS has quota support; "" skips
	// the check.
	procQuota string
}

var defaultXFSConfig = xfsConfig{
	mountOpts: "prjquota",
	superOpt:  "prjquota",
	quota:     func(fd int, dev string) quotaOps { return &quotactl{fd: fd, dev: dev} },
	procQuota: "/proc/fs/xfs/xqm",
}

// errNoXFSQuota is how a kernel without CONFIG_XFS_QUOTA is reported.
const errNoXFSQuota = "the kernel's XFS has no quota support (CONFIG_XFS_QUOTA is off), so layers cannot get hard limits"

// xfsLacksQuota reports a kernel whose XFS is registered (it has
// /proc/fs/xfs) but was built without quotas (no /proc/fs/xfs/xqm): known
// before any image is made or mounted.
func (c xfsConfig) xfsLacksQuota() bool {
	if c.procQuota == "" {
		return false
	}
	if _, err := os.Stat(filepath.Dir(c.procQuota)); err != nil {
		return false // XFS not loaded yet: the mount will tell
	}
	_, err := os.Stat(c.procQuota)
	return errors.Is(err, os.ErrNotExist)
}

// OpenXFS creates (first time: sparse file + mkfs.xfs) or reuses the image,
// attaches it to a loop device (LOOP_CTL_GET_FREE + LOOP_CONFIGURE with
// autoclear), and mounts it with prjquota (or finds it already mounted, after
// a crash). Project ids are allocated per layer and recorded so they survive
// restarts.
//
// o.ImageSize is only used when the image is first made (at least
// MinImageSize); an existing image keeps its size. o.Dir and its ancestors
// must be searchable by the sandboxes' uids (mode 0711 is enough) for them
// to reach their layers.
func OpenXFS(o Options) (Store, error) { return openXFS(o, defaultXFSConfig) }

func openXFS(o Options, cfg xfsConfig) (Store, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("disk: %w", errs.Invalid("store directory not set"))
	}
	if err := os.MkdirAll(o.Dir, 0o711); err != nil {
		return nil, fmt.Errorf("disk: create %s: %w", o.Dir, err)
	}
	dir, err := filepath.Abs(o.Dir)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("disk: resolve %s: %w", o.Dir, err)
	}
	s := &xfsStore{
		dir:     dir,
		mnt:     filepath.Join(dir, mountName),
		image:   filepath.Join(dir, imageName),
		rootFd:  -1,
		projFd:  -1,
		records: map[string]uint32{},
		used:    map[uint32]string{},
		busy:    map[string]bool{},
		hint:    1,
		cfg:     cfg,
	}
	if err := os.Mkdir(s.mnt, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("disk: create %s: %w", s.mnt, err)
	}
	// mount(2) follows symlinks: a link at Dir/mnt would put the image (and
	// every layer) wherever it points.
	if fi, err := os.Lstat(s.mnt); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("disk: %s is not a directory", s.mnt)
	}
	// Bad options are the caller's error on every host, so check them
	// before anything that depends on the kernel.
	if _, err := os.Lstat(s.image); errors.Is(err, os.ErrNotExist) && o.ImageSize < MinImageSize {
		return nil, fmt.Errorf("disk: %w", errs.Invalid("image size %d is below the minimum of %d bytes", o.ImageSize, MinImageSize))
	}
	mounted, err := s.mount(o.ImageSize)
	if err != nil {
		return nil, fmt.Errorf("disk: %w", err)
	}
	if err := s.init(); err != nil {
		s.closeFds()
		if mounted {
			_ = unix.Unmount(s.mnt, unix.UMOUNT_NOFOLLOW)
		}
		return nil, fmt.Errorf("disk: %w", err)
	}
	return s, nil
}

// mount makes sure the image is mounted at s.mnt with project quotas,
// reusing a mount that survived a crash of the previous server. It reports
// whether it mounted the image itself.
func (s *xfsStore) mount(size int64) (bool, error) {
	ms, err := readMountinfo()
	if err != nil {
		return false, err
	}
	if m, ok := topMount(ms, s.mnt); ok {
		if err := s.checkExisting(m); err != nil {
			return false, err
		}
		s.dev = m.Source
		return false, nil
	}
	if s.cfg.xfsLacksQuota() {
		return false, fmt.Errorf("%w: %s", errs.ErrUnsupported, errNoXFSQuota)
	}
	created, err := s.ensureImage(size)
	if err != nil {
		return false, err
	}
	mounted := false
	defer func() {
		if !mounted && created {
			// Nothing is on a fresh image yet: do not leave it behind.
			_ = os.Remove(s.image)
		}
	}()
	dev, lfd, err := attachLoop(s.image)
	if err != nil {
		return false, fmt.Errorf("%w: attach %s to a loop device: %w", errs.ErrUnsupported, s.image, err)
	}
	if err := unix.Mount(dev, s.mnt, "xfs", mountFlags, s.cfg.mountOpts); err != nil {
		defer detachLoop(lfd)
		if errors.Is(err, unix.ENODEV) {
			return false, fmt.Errorf("%w: mount xfs: the kernel has no XFS: %w", errs.ErrUnsupported, err)
		}
		if errors.Is(err, unix.EINVAL) && s.cfg.mountOpts != "" {
			// EINVAL also means a bad image: tell the two apart by whether
			// the image mounts without the quota option.
			if perr := unix.Mount(dev, s.mnt, "xfs", mountFlags, ""); perr == nil {
				_ = unix.Unmount(s.mnt, unix.UMOUNT_NOFOLLOW)
				return false, fmt.Errorf("%w: %s: %w", errs.ErrUnsupported, errNoXFSQuota, err)
			}
		}
		return false, fmt.Errorf("mount %s on %s (xfs, %s): %w", dev, s.mnt, s.cfg.mountOpts, err)
	}
	// The mount holds the device now; with autoclear, closing our fd lets
	// the device detach itself when the filesystem is unmounted.
	unix.Close(lfd)
	s.dev = dev
	mounted = true
	return true, nil
}

// checkExisting accepts a mount found at s.mnt only if it is XFS with
// project quotas enforced, on a loop device backed by our image: anything
// else (someone else's mount over our path) is refused, not reused.
func (s *xfsStore) checkExisting(m mountEntry) error {
	if m.FSType != "xfs" {
		return fmt.Errorf("%s is already mounted with %s, not our xfs image", s.mnt, m.FSType)
	}
	if m.Root != "/" {
		return fmt.Errorf("%s is a bind mount of %s inside a filesystem, not our image's root", s.mnt, m.Root)
	}
	if !hasOpt(m.SuperOpts, s.cfg.superOpt) {
		return fmt.Errorf("%s is mounted without enforced project quotas (%s)", s.mnt, m.SuperOpts)
	}
	var st unix.Stat_t
	if err := unix.Stat(s.image, &st); err != nil {
		return fmt.Errorf("%s is mounted but its image is unusable: %w", s.mnt, err)
	}
	ok, err := loopBacks(m.Source, &st)
	if err != nil {
		return fmt.Errorf("%s is mounted from %s: %w", s.mnt, m.Source, err)
	}
	if !ok {
		return fmt.Errorf("%s is mounted from %s, which is not backed by %s", s.mnt, m.Source, s.image)
	}
	return nil
}

// ensureImage makes the sparse image and its filesystem if it does not
// exist yet. It is built under a temporary name and renamed into place, so
// a crash mid-mkfs never leaves a half-made image behind.
func (s *xfsStore) ensureImage(size int64) (created bool, err error) {
	if _, err := os.Lstat(s.image); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("stat image: %w", err)
	}
	if size < MinImageSize {
		return false, errs.Invalid("image size %d is below the minimum of %d bytes", size, MinImageSize)
	}
	size &^= 4095
	mkfs, err := exec.LookPath("mkfs.xfs")
	if err != nil {
		return false, fmt.Errorf("%w: mkfs.xfs not found (install xfsprogs): %w", errs.ErrUnsupported, err)
	}
	tmp := s.image + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("remove stale %s: %w", tmp, err)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("create image: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = runMkfs(mkfs, tmp)
	}
	if err == nil {
		err = syncFile(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, s.image)
	}
	if err == nil {
		err = syncFile(s.dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return false, fmt.Errorf("make image %s: %w", s.image, err)
	}
	return true, nil
}

func runMkfs(mkfs, image string) error {
	ctx, cancel := context.WithTimeout(context.Background(), mkfsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, mkfs, "-q", image)
	out := &limitedBuffer{max: maxMkfsOutput}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mkfs.xfs: %w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// init opens the mounted filesystem and loads the project records.
func (s *xfsStore) init() error {
	fd, err := unix.Open(s.mnt, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", s.mnt, err)
	}
	s.rootFd = fd
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return fmt.Errorf("statfs %s: %w", s.mnt, err)
	}
	if sfs.Type != unix.XFS_SUPER_MAGIC {
		return fmt.Errorf("%s is not an xfs mount", s.mnt)
	}
	s.fsSize = int64(sfs.Blocks) * int64(sfs.Bsize)
	id, err := identOf(fd)
	if err != nil {
		return err
	}
	s.ident = id.mountIdent
	s.q = s.cfg.quota(fd, s.dev)
	// Sandbox uids must traverse the root to reach their layer, but not
	// list it (layer ids would leak to other tenants).
	if err := unix.Fchown(fd, 0, 0); err != nil {
		return fmt.Errorf("chown %s: %w", s.mnt, err)
	}
	if err := unix.Fchmod(fd, 0o711); err != nil {
		return fmt.Errorf("chmod %s: %w", s.mnt, err)
	}
	if err := unix.Mkdirat(fd, projectsName, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("create %s: %w", projectsName, err)
	}
	pfd, err := openDirAt(fd, projectsName)
	if err != nil {
		return fmt.Errorf("open %s: %w", projectsName, err)
	}
	s.projFd = pfd
	if err := s.loadRecords(); err != nil {
		return err
	}
	// Probe quotactl (and learn whether quotactl_fd exists) now, so a
	// broken quota setup fails Open rather than the first Create.
	if _, err := s.q.get(0); err != nil {
		return err
	}
	return nil
}

func (s *xfsStore) loadRecords() error {
	names, err := readDirNames(s.projFd, maxProjects)
	if err != nil {
		return fmt.Errorf("read %s: %w", projectsName, err)
	}
	buf := make([]byte, 32)
	for _, name := range names {
		if !validID(name) {
			continue // not ours
		}
		n, err := unix.Readlinkat(s.projFd, name, buf)
		if err != nil {
			return fmt.Errorf("read project record %s: %w", name, err)
		}
		pid, err := parseProjID(string(buf[:n]))
		if err != nil {
			return fmt.Errorf("project record %s: %w", name, err)
		}
		if other, dup := s.used[pid]; dup {
			return fmt.Errorf("project records %s and %s share project id %d", other, name, pid)
		}
		s.records[name] = pid
		s.used[pid] = name
	}
	return nil
}

// readDirNames lists a directory through its fd (entries other than . and
// ..), refusing more than max of them.
func readDirNames(fd, max int) ([]string, error) {
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, err
	}
	var names []string
	buf := make([]byte, direntBufSize)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return names, nil
		}
		for off := 0; off < n; {
			d, reclen, ok := parseDirent(buf[off:n])
			if !ok {
				return nil, errors.New("malformed directory entry")
			}
			off += reclen
			if d.Name == "." || d.Name == ".." {
				continue
			}
			if len(names) >= max {
				return nil, fmt.Errorf("more than %d entries", max)
			}
			names = append(names, d.Name)
		}
	}
}

func (s *xfsStore) Kind() string { return "xfs" }

func (s *xfsStore) path(id string) string { return filepath.Join(s.mnt, id) }

func (s *xfsStore) begin() error {
	s.ops.RLock()
	if s.closed {
		s.ops.RUnlock()
		return fmt.Errorf("disk: %w", errs.New(errs.CodeUnavailable, "disk store is closed"))
	}
	return nil
}

func (s *xfsStore) end() { s.ops.RUnlock() }

func (s *xfsStore) Create(id string, bytes, inodes int64, uid, gid int) (*Layer, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := checkLimits(bytes, inodes, uid, gid); err != nil {
		return nil, err
	}
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	if bytes > s.fsSize {
		return nil, fmt.Errorf("disk: %w", errs.Invalid("disk quota of %d bytes exceeds the store's %d bytes", bytes, s.fsSize))
	}

	pid, err := s.reserve(id)
	if err != nil {
		return nil, err
	}
	defer s.release(id)
	if err := s.create(id, pid, bytes, inodes, uid, gid); err != nil {
		if uerr := s.undoCreate(id, pid); uerr != nil {
			err = errors.Join(err, fmt.Errorf("undo: %w", uerr))
		}
		return nil, fmt.Errorf("disk: create layer %s: %w", id, err)
	}
	return &Layer{ID: id, Dir: s.path(id)}, nil
}

// reserve marks id busy and allocates its project id: the lowest id that
// no record holds and that XFS charges nothing to, so a project id is never
// shared with files left over from an earlier layer (nor with a removed
// layer's inodes that XFS has not finished freeing).
func (s *xfsStore) reserve(id string) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.records[id]; ok || s.busy[id] {
		return 0, fmt.Errorf("disk: %w", errs.New(errs.CodeConflict, "layer %s already exists", id))
	}
	var st unix.Stat_t
	if err := unix.Fstatat(s.rootFd, id, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		return 0, fmt.Errorf("disk: %w", errs.New(errs.CodeConflict, "layer %s already exists (unrecorded; remove it first)", id))
	} else if !errors.Is(err, unix.ENOENT) {
		return 0, fmt.Errorf("disk: stat layer %s: %w", id, err)
	}
	flushed := false
	var firstCharged uint32
	charged := 0
	for pid := s.hint; pid <= maxProjects; pid++ {
		if _, ok := s.used[pid]; ok {
			continue
		}
		if !flushed {
			// XFS frees unlinked inodes in the background; statfs pushes
			// that work along, so a just-removed layer drains sooner.
			var sfs unix.Statfs_t
			_ = unix.Fstatfs(s.rootFd, &sfs)
			flushed = true
		}
		u, err := s.q.get(pid)
		if err != nil {
			return 0, fmt.Errorf("disk: %w", err)
		}
		if u.Inodes != 0 || u.Bytes != 0 {
			// Still charged (a removed layer not yet drained, or stray
			// files): skip it this time, look again next time.
			if firstCharged == 0 {
				firstCharged = pid
			}
			if charged++; charged >= maxChargedSkips {
				return 0, fmt.Errorf("disk: %w", errs.New(errs.CodeUnavailable, "%d free project ids are still charged to removed files; retry later", charged))
			}
			continue
		}
		s.hint = pid + 1
		if firstCharged != 0 {
			s.hint = firstCharged
		}
		s.records[id] = pid
		s.used[pid] = id
		s.busy[id] = true
		return pid, nil
	}
	return 0, fmt.Errorf("disk: %w", errs.New(errs.CodeLimit, "no free project id: %d layers exist", len(s.used)))
}

func (s *xfsStore) release(id string) {
	s.mu.Lock()
	delete(s.busy, id)
	s.mu.Unlock()
}

// forget drops id's record from memory and frees its project id.
func (s *xfsStore) forget(id string, pid uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, id)
	if s.used[pid] == id {
		delete(s.used, pid)
		if pid < s.hint {
			s.hint = pid
		}
	}
}

func (s *xfsStore) step(name string) error {
	if s.failAt == name {
		return fmt.Errorf("injected failure after %s", name)
	}
	return nil
}

// create does the work of Create. The record goes first so that a crash at
// any point leaves something List reports and Remove cleans up; the quota
// is set before the directory joins the project, so the layer is never
// unbounded.
func (s *xfsStore) create(id string, pid uint32, bytes, inodes int64, uid, gid int) error {
	// A symlink's target is metadata, journalled with the directory entry:
	// the record is atomic and needs no fsync to be crash-consistent.
	if err := unix.Symlinkat(strconv.FormatUint(uint64(pid), 10), s.projFd, id); err != nil {
		return fmt.Errorf("record project: %w", err)
	}
	if err := s.step("record"); err != nil {
		return err
	}
	s.mu.Lock()
	err := s.q.setLimits(pid, bytes, inodes)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := s.step("limits"); err != nil {
		return err
	}
	if err := unix.Mkdirat(s.rootFd, id, 0o700); err != nil {
		return fmt.Errorf("mkdir: %w", err)
	}
	fd, err := openDirAt(s.rootFd, id)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, uid, gid); err != nil {
		return fmt.Errorf("chown: %w", err)
	}
	if err := unix.Fchmod(fd, 0o700); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	fa, err := getFsxattr(fd)
	if err != nil {
		return err
	}
	fa.Projid = pid
	fa.Xflags |= fsXflagProjinherit
	if err := setFsxattr(fd, &fa); err != nil {
		return err
	}
	return s.step("project")
}

func (s *xfsStore) undoCreate(id string, pid uint32) error {
	var errsOut []error
	if err := removeTree(s.rootFd, id, s.ident); err != nil {
		errsOut = append(errsOut, err)
	}
	if err := s.clearProject(id, pid); err != nil {
		errsOut = append(errsOut, err)
	}
	return errors.Join(errsOut...)
}

// clearProject resets pid's limits and deletes id's record.
func (s *xfsStore) clearProject(id string, pid uint32) error {
	s.mu.Lock()
	err := s.q.setLimits(pid, 0, 0)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := ignoreENOENT(unix.Unlinkat(s.projFd, id, 0)); err != nil {
		return fmt.Errorf("delete project record: %w", err)
	}
	s.forget(id, pid)
	return nil
}

func (s *xfsStore) Get(id string) (*Layer, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	s.mu.Lock()
	_, ok := s.records[id]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("disk: %w", errs.NotFound("layer %s not found", id))
	}
	var st unix.Stat_t
	if err := unix.Fstatat(s.rootFd, id, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("disk: %w", errs.NotFound("layer %s not found (incomplete; remove it)", id))
	}
	return &Layer{ID: id, Dir: s.path(id)}, nil
}

func (s *xfsStore) Usage(id string) (Usage, error) {
	if err := checkID(id); err != nil {
		return Usage{}, err
	}
	if err := s.begin(); err != nil {
		return Usage{}, err
	}
	defer s.end()
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.records[id]
	if !ok {
		return Usage{}, fmt.Errorf("disk: %w", errs.NotFound("layer %s not found", id))
	}
	u, err := s.q.get(pid)
	if err != nil {
		return Usage{}, fmt.Errorf("disk: layer %s: %w", id, err)
	}
	return u, nil
}

func (s *xfsStore) Remove(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	s.mu.Lock()
	if s.busy[id] {
		s.mu.Unlock()
		return fmt.Errorf("disk: %w", errs.New(errs.CodeConflict, "layer %s is busy", id))
	}
	pid, recorded := s.records[id]
	s.busy[id] = true
	s.mu.Unlock()
	defer s.release(id)

	// The tree goes first: until it is gone the record (and so the quota
	// and List's report of the layer) stays, and a failed Remove can be
	// retried.
	if err := removeTree(s.rootFd, id, s.ident); err != nil {
		return fmt.Errorf("disk: remove layer %s: %w", id, err)
	}
	if recorded {
		if err := s.clearProject(id, pid); err != nil {
			return fmt.Errorf("disk: remove layer %s: %w", id, err)
		}
	}
	return nil
}

func (s *xfsStore) List() ([]string, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	names, err := readDirNames(s.rootFd, maxProjects+1)
	if err != nil {
		return nil, fmt.Errorf("disk: list %s: %w", s.mnt, err)
	}
	set := map[string]bool{}
	for _, n := range names {
		if validID(n) {
			set[n] = true
		}
	}
	s.mu.Lock()
	for id := range s.records {
		set[id] = true
	}
	s.mu.Unlock()
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

func (s *xfsStore) closeFds() {
	if s.projFd >= 0 {
		unix.Close(s.projFd)
		s.projFd = -1
	}
	if s.rootFd >= 0 {
		unix.Close(s.rootFd)
		s.rootFd = -1
	}
}

// Close unmounts the image; the loop device then detaches itself
// (autoclear). Overlays of running sandboxes hold their own references to
// the filesystem, so they keep working until they are torn down. A second
// Close is a no-op.
func (s *xfsStore) Close() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.closeFds()
	if err := unix.Unmount(s.mnt, unix.UMOUNT_NOFOLLOW); err != nil {
		return fmt.Errorf("disk: unmount %s: %w", s.mnt, err)
	}
	return nil
}

func readMountinfo() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	data, err := readLimited(f, maxMountinfo)
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return parseMountinfo(data)
}
