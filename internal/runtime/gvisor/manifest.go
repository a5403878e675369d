package gvisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// A checkpoint image is a directory: runsc's files (its state file, the
// memory pages, gVisor's overlay upper layers) and manifest.json, which
// says what wrote it and lists every file with its size and CRC-32C.
// Restore verifies the manifest before runsc reads anything: a truncated,
// corrupt or foreign image is refused with a clear error, never handed to
// runsc (whose restore of a damaged image can fail half-way).

// ManifestName is the manifest's file name in an image directory.
const ManifestName = "manifest.json"

// manifestFormat is the version of the manifest's layout.
const manifestFormat = 1

// Manifest describes a checkpoint image.
type Manifest struct {
	Format int    `json:"format"`
	Runsc  string `json:"runsc"` // RunscVersion of the runsc that wrote it
	// Sandbox is the id of the checkpointed sandbox; Token the token its
	// agent presents (restored memory keeps it).
	Sandbox   string    `json:"sandbox"`
	Token     string    `json:"token"`
	Created   time.Time `json:"created"`
	Networked bool      `json:"networked"`
	DiskBytes int64     `json:"disk_bytes"` // each writable layer's bound
	Pids      int64     `json:"pids"`
	Hostname  string    `json:"hostname"`
	ShmBytes  int64     `json:"shm_bytes"`
	NoFile    uint64    `json:"nofile,omitempty"` // 0: legacyNoFile
	Files     []File    `json:"files"`
}

// File is one file of an image.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
}

// Bytes is the image's total size.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// idRE is a sandbox id: one path component of [a-z0-9_-].
var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// imageFileRE bounds the names an image may hold: runsc's own files are
// plain names.
var imageFileRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// maxImageFiles bounds the files of an image.
const maxImageFiles = 1024

// fileSums lists the regular files of dir (but the manifest) with their
// sizes and CRC-32C. Anything else in it (a directory, a symlink) is an
// error: runsc writes none. The files are read side by side (an image is
// a few files, one of them the memory pages); with flush each file is also
// fsync'd while it is read, so that writing back a fresh checkpoint and
// summing it overlap instead of following each other.
func fileSums(dir string, flush bool) ([]File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(ents) > maxImageFiles+1 {
		return nil, fmt.Errorf("%d files", len(ents))
	}
	var names []string
	for _, e := range ents {
		if e.Name() == ManifestName {
			continue
		}
		if !e.Type().IsRegular() || !imageFileRE.MatchString(e.Name()) {
			return nil, fmt.Errorf("unexpected entry %q", e.Name())
		}
		names = append(names, e.Name())
	}
	out := make([]File, len(names))
	errsOf := make([]error, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errsOf[i] = sumFile(filepath.Join(dir, n), flush)
		}()
	}
	wg.Wait()
	if err := errors.Join(errsOf...); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func sumFile(path string, flush bool) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	synced := make(chan error, 1)
	if flush {
		go func() { synced <- f.Sync() }()
	} else {
		synced <- nil
	}
	h := crc32.New(castagnoli)
	n, err := io.CopyBuffer(h, f, make([]byte, 1<<20))
	if serr := <-synced; err == nil {
		err = serr
	}
	if err != nil {
		return File{}, err
	}
	return File{Name: filepath.Base(path), Size: n, CRC32C: h.Sum32()}, nil
}

// parseManifest decodes and checks a manifest's own consistency.
func parseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if len(b) > 1<<20 {
		return nil, badImage("its manifest is too large")
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, badImage("its manifest is malformed")
	}
	if m.Format != manifestFormat {
		return nil, errs.New(errs.CodeUnsupported, "the checkpoint image has format %d; this server reads format %d", m.Format, manifestFormat)
	}
	if m.Runsc != RunscVersion {
		return nil, errs.New(errs.CodeUnsupported, "the checkpoint image was written by gVisor %s; this server runs %s, which cannot restore it", m.Runsc, RunscVersion)
	}
	if !idRE.MatchString(m.Sandbox) || len(m.Token) != 64 {
		return nil, badImage("its manifest names no valid sandbox")
	}
	if len(m.Files) == 0 || len(m.Files) > maxImageFiles {
		return nil, badImage("its manifest lists %d files", len(m.Files))
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if !imageFileRE.MatchString(f.Name) || f.Name == ManifestName || seen[f.Name] || f.Size < 0 {
			return nil, badImage("its manifest lists an invalid file")
		}
		seen[f.Name] = true
	}
	return &m, nil
}

// readManifest reads dir's manifest and checks every file it lists
// against the files there: same set, sizes and checksums.
func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, badImage("it has no manifest (not a gVisor checkpoint image, or one whose writing did not finish)")
		}
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := parseManifest(b)
	if err != nil {
		return nil, err
	}
	have, err := fileSums(dir, false)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "the checkpoint image is corrupt: it holds unexpected files")
	}
	byName := make(map[string]File, len(have))
	for _, h := range have {
		byName[h.Name] = h
	}
	for _, f := range m.Files {
		h, ok := byName[f.Name]
		switch {
		case !ok:
			return nil, badImage("file %s is missing", f.Name)
		case h.Size != f.Size:
			return nil, badImage("file %s has %d bytes, %d expected (truncated?)", f.Name, h.Size, f.Size)
		case h.CRC32C != f.CRC32C:
			return nil, badImage("file %s does not match its checksum", f.Name)
		}
	}
	if len(have) != len(m.Files) {
		return nil, badImage("it holds %d files, its manifest lists %d", len(have), len(m.Files))
	}
	return m, nil
}

func badImage(format string, args ...any) error {
	return errs.New(errs.CodeInvalid, "the checkpoint image is corrupt: "+format, args...)
}
