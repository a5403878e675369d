//go:build linux

package volume

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/errs"
)

// Options configure a Store.
type Options struct {
	Dir     string // DATA/volumes
	MaxSize int64  // one volume's ceiling (0: DefaultMaxSize)
	Log     *slog.Logger
}

// Store is the volume store.
type Store struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	mounted map[string]bool // key(tenant, name)
	refs    map[string]int  // files calls in flight
}

func key(tenant, name string) string { return tenantDir(tenant) + "/" + name }

// Open prepares the store: it empties tmp/, adopts the mounts a killed
// server left (they are ours if their loop device is backed by the
// volume's image), unmounts any other mount under mnt/, and deletes
// images that no record names (a create or delete cut short).
func Open(o Options) (*Store, error) {
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.MaxSize < MinSize {
		return nil, fmt.Errorf("volume: max size %d is below the minimum %d", o.MaxSize, MinSize)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return nil, errs.New(errs.CodeUnsupported, "volumes need mkfs.ext4 (Debian: apt-get install e2fsprogs)")
	}
	s := &Store{o: o, log: o.Log, mounted: map[string]bool{}, refs: map[string]int{}}
	for _, d := range []string{o.Dir, s.p("records"), s.p("images"), s.p("mnt"), s.p("tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("volume: %w", err)
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, fmt.Errorf("volume: %w", err)
		}
	}
	if err := removeChildren(s.p("tmp")); err != nil {
		return nil, fmt.Errorf("volume: empty tmp: %w", err)
	}
	if err := s.reconcile(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) p(parts ...string) string {
	return filepath.Join(append([]string{s.o.Dir}, parts...)...)
}

func (s *Store) recordPath(tenant, name string) string {
	return s.p("records", tenantDir(tenant), name+".json")
}
func (s *Store) imagePath(tenant, name string) string {
	return s.p("images", tenantDir(tenant), name+".img")
}
func (s *Store) mntPath(tenant, name string) string { return s.p("mnt", tenantDir(tenant), name) }

// reconcile is Open's repair after a crash.
func (s *Store) reconcile() error {
	ms, err := disk.Mounts()
	if err != nil {
		return fmt.Errorf("volume: %w", err)
	}
	mntRoot := s.p("mnt") + "/"
	for _, m := range ms {
		if !strings.HasPrefix(m.MountPoint, mntRoot) {
			continue
		}
		rel := strings.TrimPrefix(m.MountPoint, mntRoot)
		td, name, ok := strings.Cut(rel, "/")
		tb, herr := hex.DecodeString(td)
		if ok && herr == nil && ValidName(name) == nil && s.ours(m, string(tb), name) {
			s.mounted[key(string(tb), name)] = true
			continue
		}
		s.log.Warn("volume: unmounting a stray mount under the store", "mount", m.MountPoint)
		if err := unix.Unmount(m.MountPoint, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
			return fmt.Errorf("volume: unmount stray %s: %w", m.MountPoint, err)
		}
	}
	// Images without a record: a create that crashed before its record,
	// or a delete after it.
	tenants, _ := os.ReadDir(s.p("images"))
	for _, t := range tenants {
		imgs, _ := os.ReadDir(s.p("images", t.Name()))
		for _, im := range imgs {
			name := strings.TrimSuffix(im.Name(), ".img")
			if _, err := os.Stat(s.p("records", t.Name(), name+".json")); err == nil {
				continue
			}
			if s.mounted[t.Name()+"/"+name] {
				continue
			}
			s.log.Warn("volume: removing an image no record names", "image", im.Name())
			_ = os.Remove(s.p("images", t.Name(), im.Name()))
			_ = os.Remove(s.p("mnt", t.Name(), name))
		}
	}
	return nil
}

// ours reports whether mount m is volume tenant/name's own: ext4 on a
// loop device backed by its image, with a record.
func (s *Store) ours(m disk.Mount, tenant, name string) bool {
	if m.FSType != "ext4" || m.Root != "/" {
		return false
	}
	if _, err := os.Stat(s.recordPath(tenant, name)); err != nil {
		return false
	}
	var st unix.Stat_t
	if err := unix.Stat(s.imagePath(tenant, name), &st); err != nil {
		return false
	}
	ok, err := disk.LoopBacks(m.Source, &st)
	return err == nil && ok
}

// Create makes volume name of tenant with size bytes. The record is
// written last, so a crash leaves the whole volume or nothing.
func (s *Store) Create(tenant, name string, size int64) (Volume, error) {
	if err := ValidName(name); err != nil {
		return Volume{}, err
	}
	if size < MinSize || size > s.o.MaxSize {
		return Volume{}, errs.Invalid("size_mb must be between %d and %d", MinSize>>20, s.o.MaxSize>>20)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(s.recordPath(tenant, name)); err == nil {
		return Volume{}, errs.New(errs.CodeConflict, "volume %s exists", name)
	}
	if n, _ := os.ReadDir(s.p("records", tenantDir(tenant))); len(n) >= MaxPerTenant {
		return Volume{}, errs.New(errs.CodeLimit, "at most %d volumes per tenant", MaxPerTenant)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(s.o.Dir, &st); err == nil && int64(st.Bavail)*st.Bsize < size+size/8 {
		return Volume{}, errs.New(errs.CodeLimit, "the server's disk has no room for a volume of %d MiB", size>>20)
	}
	tmp, err := os.MkdirTemp(s.p("tmp"), "new-")
	if err != nil {
		return Volume{}, err
	}
	defer os.RemoveAll(tmp)
	img := filepath.Join(tmp, "image")
	if err := makeImage(img, filepath.Join(tmp, "src"), size); err != nil {
		return Volume{}, errs.Wrap(errs.CodeInternal, err, "the volume could not be made")
	}
	for _, d := range []string{filepath.Dir(s.imagePath(tenant, name)), filepath.Dir(s.recordPath(tenant, name))} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Volume{}, err
		}
	}
	if err := os.Rename(img, s.imagePath(tenant, name)); err != nil {
		return Volume{}, err
	}
	syncDir(filepath.Dir(s.imagePath(tenant, name)))
	v := Volume{Tenant: tenant, Name: name, SizeBytes: size, CreatedAt: time.Now().UTC()}
	if err := writeRecord(s.recordPath(tenant, name), v); err != nil {
		_ = os.Remove(s.imagePath(tenant, name))
		return Volume{}, err
	}
	return v, nil
}

// makeImage writes an ext4 image of size bytes at img, its blocks
// reserved with fallocate (so a full volume never fills the host), with
// a world-writable data/ directory: the tree sandboxes see.
func makeImage(img, src string, size int64) error {
	f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) {
		err = f.Truncate(size) // sparse: the host's filesystem cannot reserve
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reserve image: %w", err)
	}
	data := filepath.Join(src, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(data, 0o777); err != nil {
		return err
	}
	// -m 0: no blocks reserved for root (sandbox root is not host root,
	// and the quota is the whole size). nodiscard: keep the reservation.
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", "-L", "paddock-vol",
		"-E", "nodiscard,root_owner=0:0", "-d", src, img).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return syncFile(img)
}

func writeRecord(path string, v Volume) error {
	b, _ := json.Marshal(v)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

func readRecord(path string) (Volume, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Volume{}, err
	}
	var v Volume
	if err := json.Unmarshal(b, &v); err != nil {
		return Volume{}, fmt.Errorf("volume record %s: %w", filepath.Base(path), err)
	}
	return v, nil
}

// Get returns tenant's volume name: another tenant's is not found.
func (s *Store) Get(tenant, name string) (Volume, error) {
	if ValidName(name) != nil {
		return Volume{}, errs.NotFound("volume not found")
	}
	v, err := readRecord(s.recordPath(tenant, name))
	if errors.Is(err, os.ErrNotExist) {
		return Volume{}, errs.NotFound("volume not found")
	}
	return v, err
}

// List returns tenant's volumes by name.
func (s *Store) List(tenant string) ([]Volume, error) {
	ents, err := os.ReadDir(s.p("records", tenantDir(tenant)))
	if errors.Is(err, os.ErrNotExist) {
		return []Volume{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Volume{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		v, err := readRecord(filepath.Join(s.p("records", tenantDir(tenant)), e.Name()))
		if err != nil {
			s.log.Warn("volume: unreadable record", "err", err)
			continue
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Bytes is the sum of tenant's volume sizes (its quota's measure).
func (s *Store) Bytes(tenant string) (int64, error) {
	vs, err := s.List(tenant)
	var n int64
	for _, v := range vs {
		n += v.SizeBytes
	}
	return n, err
}

// DataDir mounts volume tenant/name if it is not yet and returns the host
// path of its data directory: what the runtime bind-mounts.
func (s *Store) DataDir(tenant, name string) (string, error) {
	if _, err := s.Get(tenant, name); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.mountLocked(tenant, name); err != nil {
		return "", err
	}
	return filepath.Join(s.mntPath(tenant, name), "data"), nil
}

// mountLocked mounts the image unless it is mounted. An image must never
// be mounted through two loop devices at once (two ext4 instances on one
// image corrupt it): if a sandbox still holds a mount after ours went
// away, its loop device is found and mounted again, which shares the
// same filesystem instance.
func (s *Store) mountLocked(tenant, name string) error {
	k := key(tenant, name)
	if s.mounted[k] {
		return nil
	}
	img := s.imagePath(tenant, name)
	var st unix.Stat_t
	if err := unix.Stat(img, &st); err != nil {
		return fmt.Errorf("volume image: %w", err)
	}
	dev, fd := findLoop(&st), -1
	if dev == "" {
		var err error
		if dev, fd, err = disk.AttachLoop(img); err != nil {
			return errs.Wrap(errs.CodeInternal, err, "the volume could not be mounted")
		}
	}
	mnt := s.mntPath(tenant, name)
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		if fd >= 0 {
			disk.DetachLoop(fd)
		}
		return err
	}
	// nosuid,nodev: a sandbox writes this filesystem; a set-uid file or a
	// device node it made must mean nothing on the host (CVE-2021-22555-
	// style escalation through planted device nodes / setuid binaries).
	err := unix.Mount(dev, mnt, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOATIME, "errors=remount-ro")
	if err != nil {
		if fd >= 0 {
			disk.DetachLoop(fd)
		}
		return errs.Wrap(errs.CodeInternal, fmt.Errorf("mount %s: %w", dev, err), "the volume could not be mounted")
	}
	if fd >= 0 {
		unix.Close(fd) // autoclear: the device goes with the last mount
	}
	s.mounted[k] = true
	return nil
}

// findLoop returns the loop device backed by the file st describes, if any.
func findLoop(st *unix.Stat_t) string {
	ents, _ := os.ReadDir("/sys/block")
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "loop") {
			continue
		}
		if _, err := os.Stat(filepath.Join("/sys/block", e.Name(), "loop", "backing_file")); err != nil {
			continue
		}
		dev := "/dev/" + e.Name()
		if ok, err := disk.LoopBacks(dev, st); err == nil && ok {
			return dev
		}
	}
	return ""
}

// Acquire holds volume tenant/name for a files call: Delete refuses while
// it is held. It returns the data directory and the release.
func (s *Store) Acquire(tenant, name string) (string, func(), error) {
	dir, err := s.DataDir(tenant, name)
	if err != nil {
		return "", nil, err
	}
	k := key(tenant, name)
	s.mu.Lock()
	s.refs[k]++
	s.mu.Unlock()
	return dir, sync.OnceFunc(func() {
		s.mu.Lock()
		s.refs[k]--
		if s.refs[k] == 0 {
			delete(s.refs, k)
		}
		s.mu.Unlock()
	}), nil
}

// Usage is the bytes used in volume tenant/name (ext4's own metadata
// included) and the inodes in use.
func (s *Store) Usage(tenant, name string) (used, inodes int64, err error) {
	dir, err := s.DataDir(tenant, name)
	if err != nil {
		return 0, 0, err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, int64(st.Files - st.Ffree), nil
}

// Delete removes volume tenant/name: the record first (from then on it
// does not exist, and a crash leaves only an image Open deletes), then
// the mount and the image. The caller checks that no sandbox uses it.
func (s *Store) Delete(tenant, name string) error {
	if _, err := s.Get(tenant, name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(tenant, name)
	if s.refs[k] > 0 {
		return errs.New(errs.CodeConflict, "volume %s is in use by a files call; try again", name)
	}
	if err := os.Remove(s.recordPath(tenant, name)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errs.NotFound("volume not found")
		}
		return err
	}
	syncDir(filepath.Dir(s.recordPath(tenant, name)))
	mnt := s.mntPath(tenant, name)
	if s.mounted[k] {
		if err := unix.Unmount(mnt, unix.UMOUNT_NOFOLLOW); err != nil {
			// Something on the host still looks inside: detach it, it
			// goes once that lets go.
			_ = unix.Unmount(mnt, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		}
		delete(s.mounted, k)
	}
	_ = os.Remove(mnt)
	if err := os.Remove(s.imagePath(tenant, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("volume: image not removed; the next start removes it", "volume", name, "err", err)
	}
	return nil
}

// Close leaves the mounts in place: sandboxes running across a restart
// keep theirs, and the next Open adopts ours.
func (s *Store) Close() error { return nil }

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		_ = f.Sync()
		f.Close()
	}
}

func removeChildren(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
