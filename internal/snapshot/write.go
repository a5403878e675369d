package snapshot

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Bounds of one snapshot.
const (
	MaxEntries = 1 << 20 // files, directories, links
	maxPath    = 4096
)

// Meta is what a new snapshot records besides its files.
type Meta struct {
	Tenant, Name, Template, Source string
	// MemoryDir is a complete memory image (a directory in the store's
	// tmp, TempDir) of MemoryBytes the snapshot takes over; "": none.
	MemoryDir   string
	MemoryBytes int64
}

// Put reads a capture (a tar stream, runtime.FSCapturer's) into a new
// snapshot. Its files are stored once per tenant by content; the manifest
// is written last (temporary file, fsync, rename, fsync of the
// directory), so the snapshot exists whole or not at all. maxBytes (0:
// none) bounds the snapshot's content: past it Put fails with a
// limit_exceeded error and keeps nothing. A name taken answers conflict.
func (s *Store) Put(ctx context.Context, meta Meta, r io.Reader, maxBytes int64) (Manifest, error) {
	if err := ValidName(meta.Name); err != nil {
		return Manifest{}, err
	}
	p := s.manifestPath(meta.Tenant, meta.Name)
	if _, err := os.Lstat(p); err == nil {
		return Manifest{}, errs.New(errs.CodeConflict, "a snapshot named %s already exists", meta.Name)
	}
	m := Manifest{Name: meta.Name, Tenant: meta.Tenant, Template: meta.Template, Source: meta.Source,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
	var held []string // blobs this Put marked pending
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, b := range held {
			if s.pending[b]--; s.pending[b] <= 0 {
				delete(s.pending, b)
				if s.refs[b] == 0 {
					_ = os.Remove(b) // not committed: nothing names it
				}
			}
		}
	}()
	tr := tar.NewReader(r)
	buf := make([]byte, 1<<20)
	files := map[string]bool{} // regular files so far: what a hard link may name
	for {
		if err := ctx.Err(); err != nil {
			return Manifest{}, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("read capture: %w", err)
		}
		if len(m.Entries) >= MaxEntries {
			return Manifest{}, errs.New(errs.CodeLimit, "a snapshot holds at most %d files", MaxEntries)
		}
		if len(h.Name) > maxPath || len(h.Linkname) > maxPath {
			return Manifest{}, errs.Invalid("a path in the sandbox is longer than %d bytes", maxPath)
		}
		e := Entry{Path: h.Name, Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid, Link: h.Linkname, MTime: h.ModTime.UnixNano()}
		for k, v := range h.PAXRecords {
			if name, ok := strings.CutPrefix(k, "SCHILY.xattr."); ok {
				if e.Xattrs == nil {
					e.Xattrs = map[string]string{}
				}
				e.Xattrs[name] = v
			}
		}
		if h.Typeflag == tar.TypeReg {
			if maxBytes > 0 && m.Bytes+h.Size > maxBytes {
				return Manifest{}, errs.New(errs.CodeLimit, "the snapshot is over the %d MiB the tenant may still store", maxBytes>>20)
			}
			sum, blob, err := s.writeBlob(meta.Tenant, tr, buf)
			if err != nil {
				return Manifest{}, err
			}
			held = append(held, blob)
			e.Size, e.SHA256 = h.Size, sum
			m.Bytes += h.Size
			files[h.Name] = true
		}
		if h.Typeflag == tar.TypeLink && !files[h.Linkname] {
			// A second name of a file stored once (its bytes counted
			// once): it must name a file this snapshot holds.
			return Manifest{}, errs.Invalid("a hard link in the sandbox names a file the capture does not hold")
		}
		m.Entries = append(m.Entries, e)
	}
	m.Files = len(m.Entries)
	if meta.MemoryDir != "" {
		// The image moves in before the manifest names it: a crash in
		// between leaves an image no manifest names, which Open removes.
		mem := s.memoryPath(meta.Tenant, meta.Name)
		if err := os.MkdirAll(filepath.Dir(mem), 0o700); err != nil {
			return Manifest{}, err
		}
		_ = os.RemoveAll(mem) // an orphan of a crash, under this free name
		if err := os.Rename(meta.MemoryDir, mem); err != nil {
			return Manifest{}, fmt.Errorf("memory image: %w", err)
		}
		m.MemoryBytes = meta.MemoryBytes
		if err := s.commit(m, p); err != nil {
			_ = os.RemoveAll(mem)
			return Manifest{}, err
		}
		return m, nil
	}
	return m, s.commit(m, p)
}

// writeBlob stores one file's content, answering its sha256 and path. The
// blob is marked pending (under the lock) so a concurrent Delete does not
// remove a blob this snapshot is about to name.
func (s *Store) writeBlob(tenant string, r io.Reader, buf []byte) (string, string, error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "blob-*")
	if err != nil {
		return "", "", err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a rename: a no-op
	h := sha256.New()
	_, err = io.CopyBuffer(io.MultiWriter(f, h), r, buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", fmt.Errorf("store file: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	blob := s.blobPath(tenant, sum)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[blob]++
	if _, err := os.Lstat(blob); err == nil {
		return sum, blob, nil // deduplicated
	}
	if err := os.MkdirAll(filepath.Dir(blob), 0o700); err != nil {
		s.pending[blob]--
		return "", "", err
	}
	if err := os.Rename(tmp, blob); err != nil {
		s.pending[blob]--
		return "", "", err
	}
	return sum, blob, nil
}

// commit writes m's manifest at p atomically and counts its blobs.
func (s *Store) commit(m Manifest, p string) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	// Blob directories first: a manifest must never name a blob whose
	// directory entry a crash could lose.
	for _, blob := range s.blobsOf(m) {
		_ = syncDir(filepath.Dir(blob))
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// link(2) fails if the name was taken meanwhile, where rename
		// would replace it.
		err = os.Link(tmp, p)
		if errors.Is(err, os.ErrExist) {
			err = errs.New(errs.CodeConflict, "a snapshot named %s already exists", m.Name)
		}
	}
	_ = os.Remove(tmp)
	if err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return err
	}
	for _, blob := range s.blobsOf(m) {
		s.refs[blob]++
	}
	s.bytes[m.Tenant] += m.Bytes + m.MemoryBytes
	return nil
}

// WriteTar writes snapshot m back as the capture it was made from.
func (s *Store) WriteTar(ctx context.Context, m Manifest, w io.Writer) error {
	return s.writeTar(ctx, m, w, false)
}

// WriteTarRefs writes snapshot m as a capture whose regular files name
// their content out of band (runtime.BlobKey) instead of carrying it;
// OpenBlob opens them. A restore then copies each file in the kernel.
func (s *Store) WriteTarRefs(ctx context.Context, m Manifest, w io.Writer) error {
	return s.writeTar(ctx, m, w, true)
}

// OpenBlob opens the content tenant's snapshots hold under sha256 sum
// (a key WriteTarRefs wrote).
func (s *Store) OpenBlob(tenant, sum string) (*os.File, error) {
	if len(sum) != sha256.Size*2 {
		return nil, errs.Invalid("bad content key")
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return nil, errs.Invalid("bad content key")
	}
	return os.Open(s.blobPath(tenant, sum))
}

func (s *Store) writeTar(ctx context.Context, m Manifest, w io.Writer, refs bool) error {
	tw := tar.NewWriter(w)
	buf := make([]byte, 1<<20)
	for _, e := range m.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := &tar.Header{Typeflag: e.Type, Name: e.Path, Mode: e.Mode, Uid: e.UID, Gid: e.GID, Linkname: e.Link,
			ModTime: time.Unix(0, e.MTime), Format: tar.FormatPAX}
		for k, v := range e.Xattrs {
			if h.PAXRecords == nil {
				h.PAXRecords = map[string]string{}
			}
			h.PAXRecords["SCHILY.xattr."+k] = v
		}
		if e.Type == tar.TypeReg && refs {
			if h.PAXRecords == nil {
				h.PAXRecords = map[string]string{}
			}
			h.PAXRecords[runtime.BlobKey] = e.SHA256
			h.PAXRecords[runtime.BlobSize] = strconv.FormatInt(e.Size, 10)
		} else if e.Type == tar.TypeReg {
			h.Size = e.Size
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if e.Type != tar.TypeReg || refs {
			continue
		}
		f, err := os.Open(s.blobPath(m.Tenant, e.SHA256))
		if err != nil {
			return fmt.Errorf("snapshot %s: file %s: %w", m.Name, e.Path, err)
		}
		n, err := io.CopyBuffer(tw, io.LimitReader(f, e.Size), buf)
		f.Close()
		if err == nil && n != e.Size {
			err = fmt.Errorf("blob is %d bytes, want %d", n, e.Size)
		}
		if err != nil {
			return fmt.Errorf("snapshot %s: file %s: %w", m.Name, e.Path, err)
		}
	}
	return tw.Close()
}
