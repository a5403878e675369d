package sandbox

// The files of a volume without a sandbox (docs/state.md, "Volumes"):
// the server reads and writes the volume's tree itself, confined to it
// (volume.FS). Writes are refused while a sandbox mounts the volume
// read-write: that sandbox is its one writer.

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/volume"
	"github.com/paddockhq/paddock/wire"
)

// volumeFS opens tenant's volume name's tree for one call; done releases
// it.
func (m *Manager) volumeFS(sc Scope, name string, write bool) (*volume.FS, func(), error) {
	need := rights.Read
	if write {
		need = rights.Volumes
	}
	if err := sc.Need(need); err != nil {
		return nil, nil, err
	}
	st, err := m.volStore()
	if err != nil {
		return nil, nil, err
	}
	if write {
		m.volUse.mu.Lock()
		u := m.volUse.use[volKey(sc.Tenant, name)]
		holder := ""
		if u != nil {
			holder = u.rw
		}
		m.volUse.mu.Unlock()
		if holder != "" {
			return nil, nil, errs.New(errs.CodeConflict, "volume %s is mounted read-write by sandbox %s, its one writer: write through that sandbox", name, shownHolder(holder))
		}
	}
	dir, release, err := st.Acquire(sc.Tenant, name)
	if err != nil {
		return nil, nil, err
	}
	fs, err := volume.OpenFS(dir)
	if err != nil {
		release()
		return nil, nil, err
	}
	return fs, func() { fs.Close(); release() }, nil
}

// openVolFile begins one files call on a volume: the right first (before
// any input is judged), the path made volume-relative, the tree opened
// (for writing, only while no sandbox is its writer). done releases it.
func (m *Manager) openVolFile(sc Scope, name, p string, write bool) (fs *volume.FS, rel string, done func(), err error) {
	need := rights.Read
	if write {
		need = rights.Volumes
	}
	if err := sc.Need(need); err != nil {
		return nil, "", nil, err
	}
	if rel, err = volume.CleanPath(p); err != nil {
		return nil, "", nil, err
	}
	fs, done, err = m.volumeFS(sc, name, write)
	return fs, rel, done, err
}

// makeArgs are the owner and mode of what a write or mkdir makes.
func makeArgs(user, modeText string, def uint32) (uid int, mode uint32, err error) {
	if uid, err = ownerOf(user); err != nil {
		return 0, 0, err
	}
	mode, err = parseMode(modeText, def)
	return uid, mode, err
}

// ownerOf maps a files call's user to the owner of what it makes
// (sandbox-relative ids: the mounts id-map them).
func ownerOf(user string) (int, error) {
	switch user {
	case "", wire.UserRoot:
		return 0, nil
	case wire.UserUser:
		return 1000, nil
	}
	return 0, errs.Invalid("user must be %q or %q", wire.UserRoot, wire.UserUser)
}

func parseMode(s string, def uint32) (uint32, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return 0, errs.Invalid("mode must be octal permission bits, e.g. 0644")
	}
	return uint32(n), nil
}

func (m *Manager) volFileEvent(ctx context.Context, sc Scope, kind, name, p string, start time.Time, err error) {
	e := Event{Kind: kind, Phase: "result", Tenant: sc.Tenant, Actor: sc.Actor, Duration: time.Since(start),
		Data: map[string]any{"volume": name, "path": p}}
	if err != nil {
		e.Error, e.Code = errs.Public(err), string(errs.CodeOf(err))
	}
	_ = m.event(ctx, e)
}

// VolumeReadFile opens a volume's regular file; the caller closes Body.
func (m *Manager) VolumeReadFile(ctx context.Context, sc Scope, name, p string) (*File, error) {
	fs, rel, done, err := m.openVolFile(sc, name, p, false)
	if err != nil {
		return nil, err
	}
	f, fi, err := fs.Read(rel)
	done() // the open file keeps its own reference
	if err != nil {
		return nil, err
	}
	return &File{Body: f, Size: fi.Size, Length: fi.Size, Mode: fi.Mode, MTime: fi.MTime}, nil
}

// VolumeWriteFile replaces a volume's file with body (at most the
// server's upload limit), making missing parents.
func (m *Manager) VolumeWriteFile(ctx context.Context, sc Scope, name string, req WriteRequest, body io.Reader) (FileInfo, error) {
	start := time.Now()
	fs, rel, done, err := m.openVolFile(sc, name, req.Path, true)
	if err != nil {
		return FileInfo{}, err
	}
	defer done()
	uid, mode, err := makeArgs(req.User, req.Mode, 0o644)
	if err != nil {
		return FileInfo{}, err
	}
	fi, err := fs.Write(rel, body, m.fileLimits().MaxUploadBytes, mode, uid, uid)
	m.volFileEvent(ctx, sc, "volume.files.write", name, "/"+rel, start, err)
	return fi, err
}

// VolumeStat describes a volume's path.
func (m *Manager) VolumeStat(ctx context.Context, sc Scope, name, p string) (FileInfo, error) {
	fs, rel, done, err := m.openVolFile(sc, name, p, false)
	if err != nil {
		return FileInfo{}, err
	}
	defer done()
	return fs.Stat(rel)
}

// VolumeList lists a volume's directory.
func (m *Manager) VolumeList(ctx context.Context, sc Scope, name string, req ListRequest) (ListResult, error) {
	fs, rel, done, err := m.openVolFile(sc, name, req.Path, false)
	if err != nil {
		return ListResult{}, err
	}
	defer done()
	return fs.List(rel, req.Limit)
}

// VolumeMkdir makes a directory in a volume.
func (m *Manager) VolumeMkdir(ctx context.Context, sc Scope, name string, req MkdirRequest) (FileInfo, error) {
	start := time.Now()
	fs, rel, done, err := m.openVolFile(sc, name, req.Path, true)
	if err != nil {
		return FileInfo{}, err
	}
	defer done()
	uid, mode, err := makeArgs(req.User, req.Mode, 0o755)
	if err != nil {
		return FileInfo{}, err
	}
	fi, err := fs.Mkdir(rel, req.Parents, mode, uid, uid)
	m.volFileEvent(ctx, sc, "volume.files.mkdir", name, "/"+rel, start, err)
	return fi, err
}

// VolumeRemove removes a volume's path.
func (m *Manager) VolumeRemove(ctx context.Context, sc Scope, name string, req RemoveRequest) (RemoveResult, error) {
	if err := sc.Need(rights.Volumes); err != nil {
		return RemoveResult{}, err
	}
	start := time.Now()
	rel, err := volume.CleanPath(req.Path)
	if err != nil {
		return RemoveResult{}, err
	}
	if rel == "" {
		return RemoveResult{}, errs.Invalid("the volume's root cannot be removed (delete the volume)")
	}
	if _, err := ownerOf(req.User); err != nil {
		return RemoveResult{}, err
	}
	fs, done, err := m.volumeFS(sc, name, true)
	if err != nil {
		return RemoveResult{}, err
	}
	defer done()
	n, err := fs.Remove(rel, req.Recursive)
	m.volFileEvent(ctx, sc, "volume.files.remove", name, "/"+rel, start, err)
	return RemoveResult{Removed: n}, err
}
