// Package snapshot stores sandbox filesystem snapshots under the data
// directory: content-addressed files (blobs named by their sha256, shared
// by every snapshot of the tenant that holds the same content) and one
// manifest per snapshot, written atomically. A crash at any point leaves
// either the whole snapshot or none of it; blobs no manifest names are
// removed at the next Open.
//
// Layout (docs/state.md):
//
//	DIR/blobs/<tenant>/<aa>/<sha256>      file contents, 0600
//	DIR/manifests/<tenant>/<name>.json    one per snapshot, 0600
//	DIR/memory/<tenant>/<name>/           a memory snapshot's gVisor image
//	DIR/tmp/                              partial writes (emptied by Open)
//
// <tenant> is the tenant name hex-encoded. Blobs are per tenant: a shared
// store would let one tenant learn whether another holds a file (a
// snapshot of known content is faster and free: confirmation-of-file
// attack class).
package snapshot

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
)

// MaxName is the longest snapshot name.
const MaxName = 63

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidName checks a snapshot name: letters, digits, '.', '_' and '-',
// starting with a letter or digit, at most MaxName, no "..": a name is a
// file name on the host, so no separator or parent reference may reach
// the path (path traversal).
func ValidName(name string) error {
	switch {
	case name == "":
		return errs.Invalid("a snapshot needs a name")
	case len(name) > MaxName:
		return errs.Invalid("a snapshot name is at most %d characters", MaxName)
	case !utf8.ValidString(name) || !nameRE.MatchString(name) || strings.Contains(name, ".."):
		return errs.Invalid("a snapshot name has only letters, digits, '.', '_' and '-', starts with a letter or digit and has no \"..\"")
	}
	return nil
}

// Entry is one file of a snapshot.
type Entry struct {
	Path   string            `json:"p"`
	Type   byte              `json:"t"` // tar type flag
	Mode   int64             `json:"m"`
	UID    int               `json:"u,omitempty"`
	GID    int               `json:"g,omitempty"`
	Size   int64             `json:"s,omitempty"`
	SHA256 string            `json:"h,omitempty"` // regular files
	Link   string            `json:"l,omitempty"` // symlinks
	MTime  int64             `json:"mt,omitempty"`
	Xattrs map[string]string `json:"x,omitempty"`
}

// Manifest is one snapshot.
type Manifest struct {
	Name      string    `json:"name"`
	Tenant    string    `json:"tenant"`
	Template  string    `json:"template"`
	Source    string    `json:"source"` // the sandbox it was taken of
	CreatedAt time.Time `json:"created_at"`
	// Bytes is the size of its files' contents; Files counts entries.
	Bytes int64 `json:"bytes"`
	Files int   `json:"files"`
	// MemoryBytes is the size of its memory image (MemoryPath), 0 for a
	// filesystem-only snapshot; counted in the tenant's bytes with Bytes.
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	Entries     []Entry `json:"entries,omitempty"`
}

// Info is a Manifest without its entries.
func (m Manifest) Info() Manifest { m.Entries = nil; return m }

// Store is the snapshot store.
type Store struct {
	dir string

	mu      sync.Mutex
	refs    map[string]int // blob path → manifests naming it
	pending map[string]int // blob path → snapshots being written that use it
	inUse   map[string]int // manifest path → creates reading it
	bytes   map[string]int64
}

// Open opens (making if needed) the store at dir: leftovers of a crash —
// partial writes and blobs no manifest names — are removed.
func Open(dir string) (*Store, error) {
	s := &Store{dir: dir, refs: map[string]int{}, pending: map[string]int{}, inUse: map[string]int{}, bytes: map[string]int64{}}
	for _, d := range []string{"", "blobs", "manifests", "memory", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("snapshots: %w", err)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	named := map[string]bool{} // memory images manifests name
	tenants, _ := os.ReadDir(filepath.Join(dir, "manifests"))
	for _, t := range tenants {
		files, _ := os.ReadDir(filepath.Join(dir, "manifests", t.Name()))
		for _, f := range files {
			p := filepath.Join(dir, "manifests", t.Name(), f.Name())
			if !strings.HasSuffix(f.Name(), ".json") {
				_ = os.Remove(p) // a rename's leftover
				continue
			}
			m, err := readManifest(p)
			if err != nil {
				return nil, fmt.Errorf("snapshots: %s: %w", f.Name(), err)
			}
			for _, b := range s.blobsOf(m) {
				s.refs[b]++
			}
			s.bytes[m.Tenant] += m.Bytes + m.MemoryBytes
			if m.MemoryBytes > 0 {
				named[s.memoryPath(m.Tenant, m.Name)] = true
			}
		}
	}
	// Memory images nobody names: a crash between the image's move and
	// its manifest, or after the manifest's removal.
	mts, _ := os.ReadDir(filepath.Join(dir, "memory"))
	for _, t := range mts {
		imgs, _ := os.ReadDir(filepath.Join(dir, "memory", t.Name()))
		for _, i := range imgs {
			if p := filepath.Join(dir, "memory", t.Name(), i.Name()); !named[p] {
				_ = os.RemoveAll(p)
			}
		}
	}
	// Blobs nobody names: a crash after they were written, before the
	// manifest (or after a manifest's removal, before its blobs').
	_ = filepath.WalkDir(filepath.Join(dir, "blobs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && s.refs[p] == 0 {
			_ = os.Remove(p)
		}
		return nil
	})
	return s, nil
}

func readManifest(p string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(p)
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

func tenantDir(tenant string) string { return hex.EncodeToString([]byte(tenant)) }

func (s *Store) manifestPath(tenant, name string) string {
	return filepath.Join(s.dir, "manifests", tenantDir(tenant), name+".json")
}

func (s *Store) memoryPath(tenant, name string) string {
	return filepath.Join(s.dir, "memory", tenantDir(tenant), name)
}

// MemoryPath is where memory snapshot m's image is (m.MemoryBytes > 0).
func (s *Store) MemoryPath(m Manifest) string { return s.memoryPath(m.Tenant, m.Name) }

func (s *Store) blobPath(tenant, sum string) string {
	return filepath.Join(s.dir, "blobs", tenantDir(tenant), sum[:2], sum)
}

func (s *Store) blobsOf(m Manifest) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range m.Entries {
		if e.SHA256 != "" && !seen[e.SHA256] {
			seen[e.SHA256] = true
			out = append(out, s.blobPath(m.Tenant, e.SHA256))
		}
	}
	return out
}

// Get returns tenant's snapshot name (entries included).
func (s *Store) Get(tenant, name string) (Manifest, error) {
	if err := ValidName(name); err != nil {
		return Manifest{}, err
	}
	m, err := readManifest(s.manifestPath(tenant, name))
	if errors.Is(err, os.ErrNotExist) {
		return Manifest{}, errs.NotFound("snapshot not found")
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return m, nil
}

// List returns tenant's snapshots (without entries), by name.
func (s *Store) List(tenant string) ([]Manifest, error) {
	files, err := os.ReadDir(filepath.Join(s.dir, "manifests", tenantDir(tenant)))
	if errors.Is(err, os.ErrNotExist) {
		return []Manifest{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Manifest{}
	for _, f := range files {
		name, ok := strings.CutSuffix(f.Name(), ".json")
		if !ok || ValidName(name) != nil {
			continue
		}
		m, err := readManifest(filepath.Join(s.dir, "manifests", tenantDir(tenant), f.Name()))
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, m.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Bytes is the size of tenant's snapshots together (each counted whole,
// whatever it shares with others: what the tenant would get back).
func (s *Store) Bytes(tenant string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes[tenant]
}

// Acquire holds tenant's snapshot name for a create that reads it: until
// release is called, Delete refuses it.
func (s *Store) Acquire(tenant, name string) (Manifest, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.Get(tenant, name)
	if err != nil {
		return Manifest{}, nil, err
	}
	p := s.manifestPath(tenant, name)
	s.inUse[p]++
	return m, sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.inUse[p]--; s.inUse[p] <= 0 {
			delete(s.inUse, p)
		}
	}), nil
}

// Delete removes tenant's snapshot name and the blobs only it named. A
// snapshot a create is reading answers 409 snapshot_in_use.
func (s *Store) Delete(tenant, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.manifestPath(tenant, name)
	m, err := readManifest(p)
	if errors.Is(err, os.ErrNotExist) {
		return errs.NotFound("snapshot not found")
	}
	if err != nil {
		return err
	}
	if s.inUse[p] > 0 {
		return errs.New(errs.CodeConflict, "snapshot %s is being restored into a new sandbox; delete it when that is done", name)
	}
	if err := os.Remove(p); err != nil {
		return err
	}
	_ = syncDir(filepath.Dir(p))
	s.bytes[tenant] -= m.Bytes + m.MemoryBytes
	if m.MemoryBytes > 0 {
		_ = os.RemoveAll(s.memoryPath(tenant, name))
	}
	for _, b := range s.blobsOf(m) {
		if s.refs[b]--; s.refs[b] <= 0 {
			delete(s.refs, b)
			if s.pending[b] == 0 {
				_ = os.Remove(b)
			}
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Spool makes a temporary file in the store's tmp directory (emptied by
// Open, so a crash leaves nothing): a fork's capture, kept as its tar
// stream only while the forks are made. The caller removes it.
func (s *Store) Spool() (*os.File, error) {
	return os.CreateTemp(filepath.Join(s.dir, "tmp"), "fork-*.tar")
}

// TempDir makes a directory in the store's tmp directory (emptied by
// Open): a memory image being written. The caller removes it.
func (s *Store) TempDir() (string, error) {
	return os.MkdirTemp(filepath.Join(s.dir, "tmp"), "mem-*")
}
