//go:build linux

package gvisor

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Images this backend wrote (or verified) are sealed: it remembers what
// each file was when its checksums were known good — device, inode, size,
// modification and change times. A restore of a sealed image whose every
// file is still that file (a write, a truncation or a replacement changes
// one of these) skips summing the image again: the manifest must be byte
// for byte the one sealed and is still parsed and checked (format, runsc
// version, names), the directory must
// still hold exactly the manifest's files at their sizes, and only the
// CRC pass — a read of the whole image, 112 MiB for a 100 MiB process —
// is not repeated. A fork restores one image several times; a wake
// restores what the same server hibernated. An image the backend has not
// sealed (after a restart, or one it did not write) is summed in full.

// fileID is what a file is at a moment.
type fileID struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds
}

func statID(path string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileID{}, false
	}
	return fileID{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}

// imageSeal is a sealed image: its manifest's bytes and its files.
type imageSeal struct {
	manifest []byte
	files    map[string]fileID
}

// sealMinAge: a file changed less than this before it is sealed is not
// sealed. File times can be as coarse as a clock tick (10 ms at HZ=100):
// a write in the same tick as the file's last one could leave its times
// as they were. Past two ticks, any later write shows.
const sealMinAge = 20 * time.Millisecond

// maxSeals bounds the seals kept (the oldest go first).
const maxSeals = 256

type seals struct {
	mu    sync.Mutex
	m     map[string]imageSeal
	order []string
}

// seal records image dir (whose files m lists) as verified now.
func (s *seals) seal(dir string, m *Manifest) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return
	}
	is := imageSeal{manifest: raw, files: map[string]fileID{}}
	young := time.Now().Add(-sealMinAge).UnixNano()
	for _, f := range m.Files {
		id, ok := statID(filepath.Join(dir, f.Name))
		if !ok || id.Size != f.Size || id.Ctime > young || id.Mtime > young {
			return
		}
		is.files[f.Name] = id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]imageSeal{}
	}
	if _, ok := s.m[dir]; !ok {
		s.order = append(s.order, dir)
	}
	s.m[dir] = is
	for len(s.order) > maxSeals {
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
}

// unseal forgets dir (it is removed).
func (s *seals) unseal(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[dir]; !ok {
		return
	}
	delete(s.m, dir)
	for i, d := range s.order {
		if d == dir {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// intact reports whether image dir is sealed with manifest raw (m, parsed)
// and holds exactly the files the seal does, each still the file it was.
func (s *seals) intact(dir string, raw []byte, m *Manifest) bool {
	s.mu.Lock()
	is, ok := s.m[dir]
	s.mu.Unlock()
	if !ok || !bytes.Equal(is.manifest, raw) || len(is.files) != len(m.Files) {
		return false
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != len(is.files)+1 {
		return false // an extra (or a missing) entry: the full check names it
	}
	for _, e := range ents {
		if _, ok := is.files[e.Name()]; !ok && e.Name() != ManifestName {
			return false
		}
	}
	for _, f := range m.Files {
		want, ok := is.files[f.Name]
		if !ok || want.Size != f.Size {
			return false
		}
		if id, ok := statID(filepath.Join(dir, f.Name)); !ok || id != want {
			return false
		}
	}
	return true
}

// verifyImage is readManifest, without the checksum pass for an image
// sealed intact; an image that passes the full check is sealed.
func (b *Backend) verifyImage(dir string) (m *Manifest, summed bool, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err == nil {
		if m, err = parseManifest(raw); err != nil {
			return nil, false, err
		}
		if b.seals.intact(dir, raw, m) {
			return m, false, nil
		}
	}
	if m, err = readManifest(dir); err != nil {
		return nil, true, err
	}
	b.seals.seal(dir, m)
	return m, true, nil
}
