package e2b

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// File metadata (envd 0.6.2): each upload's X-Metadata-<key> headers
// replace the file's metadata, returned with the file's EntryInfo. envd
// keeps them in "user.e2b.*" extended attributes; Paddock's guest has no
// such API, so this store keeps them in memory, each bound to the version
// of the file it came with (path, size and modification time): once the
// file changes by any other means — a command, the REST API — or is moved
// by anything but this adapter, its metadata is no longer reported.

// Limits of envd's metadata, and of this store.
const (
	metaHeaderPrefix = "x-metadata-"
	metaXattrPrefix  = len("user.e2b.") // counted per key, as envd does
	maxMetaKey       = 246
	maxMetaPerFile   = 4096
	maxMetaPerBox    = 4 << 20
	maxMetaTotal     = 64 << 20
	pruneInterval    = time.Minute
)

// parseMetadataHeaders reads the X-Metadata-* headers of an upload: keys
// lower-cased, the first value of a repeated header, printable ASCII only.
func parseMetadataHeaders(h http.Header) (map[string]string, error) {
	var out map[string]string
	total := 0
	for name, vals := range h {
		lower := strings.ToLower(name)
		key, ok := strings.CutPrefix(lower, metaHeaderPrefix)
		if !ok {
			continue
		}
		if key == "" || len(key) > maxMetaKey {
			return nil, errs.Invalid("metadata keys are 1..%d bytes", maxMetaKey)
		}
		if !printable(key) {
			return nil, errs.Invalid("metadata key %s: printable US-ASCII only", quoteText(key))
		}
		if _, dup := out[key]; dup {
			continue // X-Metadata-A and x-metadata-a: the first wins
		}
		v := ""
		if len(vals) > 0 {
			v = vals[0]
		}
		if !printable(v) {
			return nil, errs.Invalid("metadata value of %s: printable US-ASCII only", quoteText(key))
		}
		total += metaXattrPrefix + len(key) + len(v)
		if total > maxMetaPerFile {
			return nil, errs.Invalid("a file's metadata is at most %d bytes (keys, values and %d bytes per key)", maxMetaPerFile, metaXattrPrefix)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[key] = v
	}
	return out, nil
}

// printable admits 0x20..0x7e: no CR/LF (header and log injection), no
// NUL, nothing a terminal would interpret.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// metaStore holds the metadata of files, per sandbox.
type metaStore struct {
	mu        sync.Mutex
	boxes     map[string]*metaBox
	total     int64
	lastPrune time.Time
	// exists reports whether a sandbox still exists (pruning); set by the
	// server.
	exists func(id, tenant string) bool
}

type metaBox struct {
	tenant string
	files  map[string]metaEntry // by path
	bytes  int64
}

type metaEntry struct {
	size  int64
	mtime time.Time
	kv    map[string]string
	bytes int64
}

func newMetaStore() *metaStore {
	return &metaStore{boxes: map[string]*metaBox{}}
}

func entryBytes(path string, kv map[string]string) int64 {
	n := int64(len(path)) + 64
	for k, v := range kv {
		n += int64(len(k) + len(v))
	}
	return n
}

// set replaces the metadata of the file fi describes (nil kv clears it).
func (s *metaStore) set(id, tenant string, fi sandbox.FileInfo, kv map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.boxes[id]
	if b != nil {
		if old, ok := b.files[fi.Path]; ok {
			delete(b.files, fi.Path)
			b.bytes -= old.bytes
			s.total -= old.bytes
		}
	}
	if len(kv) == 0 {
		s.dropEmpty(id)
		return nil
	}
	n := entryBytes(fi.Path, kv)
	if s.total+n > maxMetaTotal {
		s.prune(time.Time{})
	}
	if s.total+n > maxMetaTotal || (b != nil && b.bytes+n > maxMetaPerBox) || n > maxMetaPerBox {
		return errs.New(errs.CodeLimit, "the server holds as much file metadata as it may (%d MiB per sandbox, %d MiB in all)",
			maxMetaPerBox>>20, maxMetaTotal>>20)
	}
	if b == nil {
		b = &metaBox{tenant: tenant, files: map[string]metaEntry{}}
		s.boxes[id] = b
	}
	cp := make(map[string]string, len(kv))
	for k, v := range kv {
		cp[k] = v
	}
	b.files[fi.Path] = metaEntry{size: fi.Size, mtime: fi.MTime, kv: cp, bytes: n}
	b.bytes += n
	s.total += n
	s.maybePrune()
	return nil
}

// get returns the metadata of the file fi describes, if it is the version
// the metadata came with.
func (s *metaStore) get(id string, fi sandbox.FileInfo) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.boxes[id]
	if b == nil {
		return nil
	}
	e, ok := b.files[fi.Path]
	if !ok {
		return nil
	}
	if fi.Type != "file" || e.size != fi.Size || !e.mtime.Equal(fi.MTime) {
		// The file changed by other means: its metadata went with the old
		// version.
		delete(b.files, fi.Path)
		b.bytes -= e.bytes
		s.total -= e.bytes
		s.dropEmpty(id)
		return nil
	}
	out := make(map[string]string, len(e.kv))
	for k, v := range e.kv {
		out[k] = v
	}
	return out
}

// under reports whether p is root or inside it.
func under(p, root string) bool {
	return p == root || (strings.HasPrefix(p, root) && (strings.HasSuffix(root, "/") || p[len(root)] == '/'))
}

// move carries the metadata of from (and of everything under it) to to.
func (s *metaStore) move(id, from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.boxes[id]
	if b == nil {
		return
	}
	moved := map[string]metaEntry{}
	for p, e := range b.files {
		if under(p, from) {
			moved[to+p[len(from):]] = e
			delete(b.files, p)
		}
	}
	for p := range b.files {
		if under(p, to) { // what the move replaced
			b.bytes -= b.files[p].bytes
			s.total -= b.files[p].bytes
			delete(b.files, p)
		}
	}
	for p, e := range moved {
		b.files[p] = e
	}
	s.dropEmpty(id)
}

// remove forgets the metadata at or under path.
func (s *metaStore) remove(id, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.boxes[id]
	if b == nil {
		return
	}
	for p, e := range b.files {
		if under(p, path) {
			delete(b.files, p)
			b.bytes -= e.bytes
			s.total -= e.bytes
		}
	}
	s.dropEmpty(id)
}

// drop forgets a sandbox's metadata.
func (s *metaStore) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.boxes[id]; b != nil {
		s.total -= b.bytes
		delete(s.boxes, id)
	}
}

func (s *metaStore) dropEmpty(id string) {
	if b := s.boxes[id]; b != nil && len(b.files) == 0 {
		s.total -= b.bytes
		delete(s.boxes, id)
	}
}

// maybePrune forgets sandboxes that are gone, at most once a minute (they
// can go by expiry or through another surface without this adapter
// hearing of it).
func (s *metaStore) maybePrune() {
	if time.Since(s.lastPrune) >= pruneInterval {
		s.prune(time.Now())
	}
}

func (s *metaStore) prune(now time.Time) {
	if s.exists == nil {
		return
	}
	s.lastPrune = now
	for id, b := range s.boxes {
		if !s.exists(id, b.tenant) {
			s.total -= b.bytes
			delete(s.boxes, id)
		}
	}
}
