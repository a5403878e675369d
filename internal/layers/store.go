package layers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

const (
	layersDir    = "sha256"
	refsDir      = "refs"
	tmpDir       = "tmp"
	rootDir      = "root"
	layerMeta    = "layer.json"
	maxMetaBytes = 64 << 10
	maxOwnerLen  = 128
	maxRefs      = 4096 // layers one owner may hold
)

// Layer is a complete layer in the store.
type Layer struct {
	DiffID    string    `json:"diff_id"`    // "sha256:<hex>" of the uncompressed tar
	Size      int64     `json:"size"`       // uncompressed tar bytes
	DiskBytes int64     `json:"disk_bytes"` // what its directory takes on disk
	Entries   int       `json:"entries"`
	Created   time.Time `json:"created"`
	Dir       string    `json:"-"` // host directory to use as an overlay lowerdir
}

// Options configure Open.
type Options struct {
	Dir      string // the store's directory (created 0700)
	MaxBytes int64  // disk bytes all layers may take; 0 means unlimited
	Log      *slog.Logger
}

// Store is the content-addressed layer store. It is safe for concurrent use.
type Store struct {
	dir string
	max int64
	log *slog.Logger

	mu       sync.Mutex
	layers   map[string]*Layer
	refs     map[string][]string // owner -> diff ids
	counts   map[string]int      // diff id -> owners holding it
	leases   map[string]int      // diff id -> live leases
	inflight map[string]chan struct{}
	used     int64
}

// Open opens (creating) the store at o.Dir and sweeps what a crash left:
// staging directories no live process holds, and layer directories
// without their layer.json.
func Open(o Options) (*Store, error) {
	if o.Dir == "" {
		return nil, errs.Invalid("layer store: empty directory")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "layer store: bad directory")
	}
	s := &Store{
		dir: abs, max: o.MaxBytes, log: o.Log,
		layers: map[string]*Layer{}, refs: map[string][]string{}, counts: map[string]int{},
		leases: map[string]int{}, inflight: map[string]chan struct{}{},
	}
	// 0700: layer trees hold other tenants' files; only the server reads them.
	for _, d := range []string{"", layersDir, refsDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o700); err != nil {
			return nil, errs.Wrap(errs.CodeInternal, err, "layer store: cannot create its directories")
		}
	}
	s.sweepTmp()
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) sweepTmp() {
	ents, err := os.ReadDir(filepath.Join(s.dir, tmpDir))
	if err != nil {
		s.log.Warn("layer store: cannot list staging", "err", err)
		return
	}
	for _, e := range ents {
		p := filepath.Join(s.dir, tmpDir, e.Name())
		f, locked, err := tryLock(p)
		if err != nil || !locked {
			continue // a live Put in another process
		}
		if err := os.RemoveAll(p); err != nil {
			s.log.Warn("layer store: cannot remove stale staging", "path", p, "err", err)
		} else {
			s.log.Info("layer store: removed stale staging", "path", p)
		}
		f.Close()
	}
}

func (s *Store) load() error {
	ents, err := os.ReadDir(filepath.Join(s.dir, layersDir))
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "layer store: cannot list layers")
	}
	for _, e := range ents {
		if !ValidHex(e.Name()) {
			continue
		}
		p := filepath.Join(s.dir, layersDir, e.Name())
		l, err := readLayerMeta(p)
		if err != nil || l.DiffID != "sha256:"+e.Name() {
			s.log.Warn("layer store: removing incomplete layer", "layer", e.Name(), "err", err)
			s.removeDir(p)
			continue
		}
		l.Dir = filepath.Join(p, rootDir)
		s.layers[l.DiffID] = l
		s.used += l.DiskBytes
	}
	rents, err := os.ReadDir(filepath.Join(s.dir, refsDir))
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "layer store: cannot list references")
	}
	for _, e := range rents {
		owner, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ValidOwner(owner) {
			continue // a temp file of an interrupted SetRefs
		}
		ids, err := readRefs(filepath.Join(s.dir, refsDir, e.Name()))
		if err != nil {
			s.log.Warn("layer store: unreadable references", "owner", owner, "err", err)
			continue
		}
		s.refs[owner] = ids
		for _, id := range uniq(ids) {
			s.counts[id]++
			if s.layers[id] == nil {
				s.log.Warn("layer store: owner references a missing layer", "owner", owner, "layer", id)
			}
		}
	}
	return nil
}

// ValidOwner reports whether owner may name a reference set: lower-case
// letters, digits, '.', '_', '-' and ':' (no path separators), 1-128 bytes.
func ValidOwner(owner string) bool {
	if owner == "" || len(owner) > maxOwnerLen || owner[0] == '.' {
		return false
	}
	for i := 0; i < len(owner); i++ {
		c := owner[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// ValidDiffID reports whether id is "sha256:" and 64 lower-case hex digits.
func ValidDiffID(id string) bool {
	h, ok := strings.CutPrefix(id, "sha256:")
	return ok && ValidHex(h)
}

// ValidHex reports whether h is a SHA-256 digest in hex: 64 lower-case
// hex digits (a layer's name here, a blob's in an OCI layout).
func ValidHex(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Get returns the layer with diff id id.
func (s *Store) Get(id string) (Layer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.layers[id]
	if l == nil {
		return Layer{}, false
	}
	return *l, true
}

// Refs returns how many owners hold layer id.
func (s *Store) Refs(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[id]
}

// Usage is the store's accounting.
type Usage struct {
	Layers       int   `json:"layers"`
	Bytes        int64 `json:"bytes"`
	MaxBytes     int64 `json:"max_bytes"`
	Unreferenced int64 `json:"unreferenced_bytes"` // what GC would free now
}

// Usage returns the store's totals.
func (s *Store) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := Usage{Layers: len(s.layers), Bytes: s.used, MaxBytes: s.max}
	for id, l := range s.layers {
		if s.collectableLocked(id) {
			u.Unreferenced += l.DiskBytes
		}
	}
	return u
}

func (s *Store) collectableLocked(id string) bool {
	return s.counts[id] == 0 && s.leases[id] == 0 && s.inflight[id] == nil
}

// Lease pins layers while something outside the store uses them (a
// running sandbox, a pull or build that has not yet set its references):
// GC never removes a leased layer.
type Lease struct {
	s   *Store
	mu  sync.Mutex
	ids map[string]int
}

// NewLease returns an empty lease.
func (s *Store) NewLease() *Lease { return &Lease{s: s, ids: map[string]int{}} }

// Hold adds layers to the lease; it fails, holding none of them, when one
// is not in the store.
func (l *Lease) Hold(ids ...string) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	for _, id := range ids {
		if l.s.layers[id] == nil {
			return errs.Wrap(errs.CodeNotFound, ErrLayerNotFound, "layer %s is not in the store", shortID(id))
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.ids[id]++
		l.s.leases[id]++
	}
	return nil
}

// Release drops everything the lease holds; it is idempotent.
func (l *Lease) Release() {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, n := range l.ids {
		if l.s.leases[id] -= n; l.s.leases[id] <= 0 {
			delete(l.s.leases, id)
		}
	}
	l.ids = map[string]int{}
}

// SetRefs atomically replaces the layers owner holds (a template's stack,
// a build-cache entry's layer). The file is written before the in-memory
// counts change, so a crash never leaves a layer counted by nobody while
// its owner still needs it.
func (s *Store) SetRefs(owner string, ids []string) error {
	if !ValidOwner(owner) {
		return errs.Invalid("layer store: invalid owner %s", quote(owner))
	}
	if len(ids) > maxRefs {
		return errs.New(errs.CodeLimit, "layer store: an owner may hold at most %d layers", maxRefs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.layers[id] == nil {
			return errs.Wrap(errs.CodeNotFound, ErrLayerNotFound, "layer %s is not in the store", shortID(id))
		}
	}
	data, err := json.Marshal(ids)
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "layer store: cannot encode references")
	}
	if err := durable.WriteFile(filepath.Join(s.dir, refsDir), owner+".json", data, 0o600); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "layer store: cannot write references")
	}
	for _, id := range uniq(s.refs[owner]) {
		s.counts[id]--
		if s.counts[id] <= 0 {
			delete(s.counts, id)
		}
	}
	ids = append([]string(nil), ids...)
	s.refs[owner] = ids
	for _, id := range uniq(ids) {
		s.counts[id]++
	}
	return nil
}

// DropRefs removes owner's references (its layers become collectable when
// nobody else holds them).
func (s *Store) DropRefs(owner string) error {
	if !ValidOwner(owner) {
		return errs.Invalid("layer store: invalid owner %s", quote(owner))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(filepath.Join(s.dir, refsDir, owner+".json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.Wrap(errs.CodeInternal, err, "layer store: cannot remove references")
	}
	_ = durable.SyncDir(filepath.Join(s.dir, refsDir))
	for _, id := range uniq(s.refs[owner]) {
		s.counts[id]--
		if s.counts[id] <= 0 {
			delete(s.counts, id)
		}
	}
	delete(s.refs, owner)
	return nil
}

// Owners returns the owners whose names start with prefix, sorted.
func (s *Store) Owners(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for o := range s.refs {
		if strings.HasPrefix(o, prefix) {
			out = append(out, o)
		}
	}
	sort.Strings(out)
	return out
}

// GC removes every layer that no owner references and no lease holds.
func (s *Store) GC() (removed int, freed int64, err error) {
	s.mu.Lock()
	var victims []*Layer
	for id, l := range s.layers {
		if s.collectableLocked(id) {
			victims = append(victims, l)
			delete(s.layers, id)
			s.used -= l.DiskBytes
		}
	}
	s.mu.Unlock()
	for _, l := range victims {
		if e := s.removeDir(filepath.Dir(l.Dir)); e != nil && err == nil {
			err = errs.Wrap(errs.CodeInternal, e, "layer store: cannot remove a layer")
		}
		removed++
		freed += l.DiskBytes
	}
	if removed > 0 {
		s.log.Info("layer store: garbage collected", "layers", removed, "bytes", freed)
	}
	return removed, freed, err
}

// removeDir renames p into tmp/ (so it vanishes from the store at once)
// and removes it there; a crash midway leaves it to the next sweep.
func (s *Store) removeDir(p string) error {
	dst := filepath.Join(s.dir, tmpDir, "rm-"+durable.RandHex())
	if err := os.Rename(p, dst); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(dst)
}

// Put stores the layer whose uncompressed tar stream is r and adds it to
// lease. When want is not empty the stream must hash to it (a registry
// or archive that lies about a diff id would otherwise poison every
// template sharing that id: cache-poisoning class); the stream is read to
// its end either way. A layer already stored is not read again.
func (s *Store) Put(ctx context.Context, lease *Lease, want string, r io.Reader, lim Limits) (Layer, error) {
	if want != "" && !ValidDiffID(want) {
		return Layer{}, errs.Invalid("layer store: invalid diff id %s", quote(want))
	}
	if want != "" {
		if l, ok, err := s.waitExisting(ctx, lease, want); ok || err != nil {
			return l, err
		}
		defer s.endInflight(want)
	}
	lim = lim.norm()
	capped := false
	if room := s.room(); s.max > 0 && room < lim.MaxBytes {
		lim.MaxBytes, capped = room, true
	}
	stage, lockf, err := s.newStaging()
	if err != nil {
		return Layer{}, errs.Wrap(errs.CodeInternal, err, "layer store: cannot create a staging directory")
	}
	defer func() {
		lockf.Close()
		os.RemoveAll(stage) // no-op once renamed into place
	}()
	root := filepath.Join(stage, rootDir)
	if err := os.Mkdir(root, 0o755); err != nil {
		return Layer{}, errs.Wrap(errs.CodeInternal, err, "layer store: cannot create a staging directory")
	}
	h := sha256.New()
	// The stream may carry tar headers and padding beyond the file
	// contents, but not unboundedly (a decompression bomb of headers).
	cr := &capReader{r: r, h: h, left: lim.MaxBytes + int64(lim.MaxEntries)*1536 + 1<<20}
	st, err := Extract(ctx, cr, root, lim)
	if err == nil {
		// The end-of-archive padding counts in the diff id.
		if _, err = io.Copy(io.Discard, cr); err != nil {
			err = readOrWriteError("", err)
		}
	}
	if err != nil {
		if errors.Is(err, ErrTooLarge) && capped {
			return Layer{}, refuse(errs.CodeLimit, ErrStoreFull, "", "the template store limit is "+itoa64(s.max)+" bytes")
		}
		return Layer{}, err
	}
	got := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if want != "" && got != want {
		return Layer{}, refuse(errs.CodeInvalid, ErrDigest, "", "diff id "+shortID(want)+", content "+shortID(got))
	}
	if want == "" {
		if l, ok, err := s.waitExisting(ctx, lease, got); ok || err != nil {
			return l, err
		}
		defer s.endInflight(got)
	}
	disk, err := durable.Usage(root)
	if err != nil {
		return Layer{}, errs.Wrap(errs.CodeInternal, err, "layer store: cannot measure a layer")
	}
	l := &Layer{DiffID: got, Size: cr.n, DiskBytes: disk, Entries: st.Entries, Created: time.Now().UTC().Truncate(time.Second)}
	if err := s.reserve(disk); err != nil {
		return Layer{}, err
	}
	data, _ := json.Marshal(l)
	if err := durable.WriteFile(stage, layerMeta, data, 0o600); err != nil {
		s.unreserve(disk)
		return Layer{}, errs.Wrap(errs.CodeInternal, err, "layer store: cannot write layer metadata")
	}
	final := filepath.Join(s.dir, layersDir, strings.TrimPrefix(got, "sha256:"))
	if err := os.Rename(stage, final); err != nil {
		s.unreserve(disk)
		return Layer{}, errs.Wrap(errs.CodeInternal, err, "layer store: cannot install a layer")
	}
	_ = durable.SyncDir(filepath.Dir(final))
	l.Dir = filepath.Join(final, rootDir)
	s.mu.Lock()
	s.layers[got] = l
	s.mu.Unlock()
	if err := lease.Hold(got); err != nil {
		return Layer{}, err
	}
	return *l, nil
}

// waitExisting returns the stored layer id (held by lease) if it exists,
// waiting for an in-flight Put of the same id; otherwise it registers the
// caller as the one putting id (ok false, err nil).
func (s *Store) waitExisting(ctx context.Context, lease *Lease, id string) (Layer, bool, error) {
	for {
		s.mu.Lock()
		if l := s.layers[id]; l != nil {
			l := *l
			s.mu.Unlock()
			if err := lease.Hold(id); err != nil {
				return Layer{}, false, err
			}
			return l, true, nil
		}
		ch := s.inflight[id]
		if ch == nil {
			s.inflight[id] = make(chan struct{})
			s.mu.Unlock()
			return Layer{}, false, nil
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Layer{}, false, ctx.Err()
		}
	}
}

func (s *Store) endInflight(id string) {
	s.mu.Lock()
	if ch := s.inflight[id]; ch != nil {
		close(ch)
		delete(s.inflight, id)
	}
	s.mu.Unlock()
}

// room is how many bytes a new layer may take: the free space below the
// limit plus what GC could reclaim.
func (s *Store) room() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	free := s.max - s.used
	for id, l := range s.layers {
		if s.collectableLocked(id) {
			free += l.DiskBytes
		}
	}
	return max(free, 0)
}

// reserve accounts n new bytes, collecting unreferenced layers first when
// the limit would be passed.
func (s *Store) reserve(n int64) error {
	s.mu.Lock()
	over := s.max > 0 && s.used+n > s.max
	s.mu.Unlock()
	if over {
		if _, _, err := s.GC(); err != nil {
			s.log.Warn("layer store: gc before a put failed", "err", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max > 0 && s.used+n > s.max {
		return refuse(errs.CodeLimit, ErrStoreFull, "", fmt.Sprintf("the layer needs %d bytes; %d of %d are in use", n, s.used, s.max))
	}
	s.used += n
	return nil
}

func (s *Store) unreserve(n int64) {
	s.mu.Lock()
	s.used -= n
	s.mu.Unlock()
}

func (s *Store) newStaging() (string, io.Closer, error) {
	p := filepath.Join(s.dir, tmpDir, "put-"+durable.RandHex())
	if err := os.Mkdir(p, 0o700); err != nil {
		return "", nil, err
	}
	f, locked, err := tryLock(p)
	if err == nil && !locked {
		err = errors.New("staging directory locked by someone else")
	}
	if err != nil {
		os.Remove(p)
		return "", nil, err
	}
	return p, f, nil
}

// capReader hashes and counts what it passes on and fails past left bytes.
type capReader struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, refuse(errs.CodeTooLarge, ErrTooLarge, "", "the uncompressed stream is too long")
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	c.left -= int64(n)
	return n, err
}

func readLayerMeta(dir string) (*Layer, error) {
	f, err := os.Open(filepath.Join(dir, layerMeta))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetaBytes))
	if err != nil {
		return nil, err
	}
	var l Layer
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

func readRefs(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRefs*80))
	if err != nil {
		return nil, err
	}
	var ids []string
	if err := json.Unmarshal(data, &ids); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if !ValidDiffID(id) {
			return nil, fmt.Errorf("invalid diff id %q", id)
		}
	}
	return ids, nil
}

func uniq(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// shortID renders a diff id for messages: "sha256:" and 12 hex digits.
func shortID(id string) string {
	if len(id) > 19 {
		return id[:19]
	}
	return quote(id)
}
