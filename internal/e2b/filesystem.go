package e2b

import (
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// filesystem.Filesystem over the manager's files API.

var filesystemMethods = map[string]rpcMethod{
	"Stat":             {need: rights.Read, unary: unaryOf(fsStat)},
	"ListDir":          {need: rights.Read, unary: unaryOf(fsListDir)},
	"MakeDir":          {need: rights.Write, unary: unaryOf(fsMakeDir)},
	"Move":             {need: rights.Write, unary: unaryOf(fsMove)},
	"Remove":           {need: rights.Write, unary: unaryOf(fsRemove)},
	"WatchDir":         {need: rights.Read, stream: streamOf(fsWatchDir)},
	"CreateWatcher":    {need: rights.Read, unary: unaryOf(fsCreateWatcher)},
	"GetWatcherEvents": {need: rights.Read, unary: unaryOf(fsGetWatcherEvents)},
	"RemoveWatcher":    {need: rights.Read, unary: unaryOf(fsRemoveWatcher)},
}

// ownerName names a sandbox uid as envd does (by user name).
func ownerName(id int) string {
	switch id {
	case 0:
		return "root"
	case 1000:
		return "user"
	}
	return strconv.Itoa(id)
}

// asEnvd is who writes a file or makes a directory for a user, and who
// gets it: envd runs as root and chowns what it makes to the caller's
// user, so an E2B user writes anywhere (/opt/new/x included) and owns it.
func asEnvd(user string) (writer, owner string) {
	if user == "" || user == wire.UserRoot {
		return user, ""
	}
	return wire.UserRoot, user
}

// linkTarget is a symlink's target as envd reports it: an absolute path (a
// relative target is taken from the link's directory), cleaned. It is
// lexical: a chain of links is not followed.
func linkTarget(link, target string) string {
	if target == "" {
		return ""
	}
	if !path.IsAbs(target) {
		target = path.Join(path.Dir(link), target)
	}
	return path.Clean(target)
}

// entryInfo maps a FileInfo and its user.e2b.* metadata onto envd's
// EntryInfo.
func entryInfo(fi sandbox.FileInfo, md map[string]string) pbEntryInfo {
	perm := fi.Perm()
	mode := perm
	e := pbEntryInfo{Name: fi.Name, Path: fi.Path, Size: fi.Size, Owner: ownerName(fi.UID), Group: ownerName(fi.GID)}
	switch fi.Type {
	case wire.TypeFile:
		e.Type = ftFile
	case wire.TypeDir:
		e.Type, mode = ftDirectory, perm|os.ModeDir
	case wire.TypeSymlink:
		e.Type, mode = ftSymlink, perm|os.ModeSymlink
		t := linkTarget(fi.Path, fi.Target)
		e.SymlinkTarget = &t
	default:
		e.Type, mode = ftUnspecified, perm|os.ModeIrregular
	}
	e.Permissions = mode.String()
	if v, err := strconv.ParseUint(fi.Mode, 8, 32); err == nil {
		e.Mode = uint32(v)
	}
	if !fi.MTime.IsZero() {
		e.ModifiedTime = pbTime(fi.MTime)
	}
	e.Metadata = nonEmpty(md)
	return e
}

func (c *rpcCall) path(p string) (string, error) { return resolvePath(p, c.q.user) }

// statEntry is the EntryInfo of a path, with its user.e2b.* metadata.
func (c *rpcCall) statEntry(p string) (*pbEntryInfo, error) {
	fi, err := c.s.m.StatFileMeta(c.ctx(), c.q.sc, c.q.id, sandbox.StatRequest{Path: p, User: c.q.user}, metaNamespace)
	if err != nil {
		return nil, err
	}
	e := entryInfo(fi.FileInfo, fi.Metadata)
	return &e, nil
}

func fsStat(c *rpcCall, in *pbPathRequest) (any, error) {
	p, err := c.path(in.Path)
	if err != nil {
		return nil, err
	}
	e, err := c.statEntry(p)
	if err != nil {
		return nil, err
	}
	return pbEntryResponse{Entry: e}, nil
}

func fsListDir(c *rpcCall, in *pbListDirRequest) (any, error) {
	p, err := c.path(in.Path)
	if err != nil {
		return nil, err
	}
	depth := int(in.Depth)
	if depth == 0 {
		depth = 1
	}
	if depth > sandbox.MaxListDepth {
		return nil, errs.Invalid("depth must be between 1 and %d", sandbox.MaxListDepth)
	}
	res, err := c.s.m.ListFilesMeta(c.ctx(), c.q.sc, c.q.id, sandbox.ListRequest{Path: p, User: c.q.user, Depth: depth,
		Limit: sandbox.MaxListLimit}, metaNamespace)
	if err != nil {
		return nil, err
	}
	if res.Truncated {
		// envd's listing has no way to say it is partial.
		return nil, errs.New(errs.CodeLimit, "the listing exceeds %d entries; list a smaller depth or directory", sandbox.MaxListLimit)
	}
	out := pbListDirResponse{Entries: make([]pbEntryInfo, 0, len(res.Entries))}
	for _, fi := range res.Entries {
		out.Entries = append(out.Entries, entryInfo(fi.FileInfo, fi.Metadata))
	}
	return out, nil
}

func fsMakeDir(c *rpcCall, in *pbPathRequest) (any, error) {
	p, err := c.path(in.Path)
	if err != nil {
		return nil, err
	}
	// envd makes the parents too, and says whether the directory existed
	// (to a caller who may read the tree; one who may only write gets
	// mkdir -p).
	if c.q.sc.Can(rights.Read) {
		fi, err := c.s.m.StatFile(c.ctx(), c.q.sc, c.q.id, sandbox.StatRequest{Path: p, User: c.q.user})
		switch {
		case err == nil && fi.Type == wire.TypeDir:
			return nil, rpcErr(ccAlreadyExists, "directory %s already exists", quoteText(p))
		case err == nil:
			return nil, rpcErr(ccAlreadyExists, "%s exists and is not a directory", quoteText(p))
		case errs.CodeOf(err) != errs.CodeNotFound:
			return nil, err
		}
	}
	writer, owner := asEnvd(c.q.user)
	fi, err := c.s.m.MakeDir(c.ctx(), c.q.sc, c.q.id, sandbox.MkdirRequest{Path: p, User: writer, Owner: owner, Parents: true})
	if err != nil {
		return nil, err
	}
	e := entryInfo(fi, nil)
	return pbEntryResponse{Entry: &e}, nil
}

func fsMove(c *rpcCall, in *pbMoveRequest) (any, error) {
	from, err := c.path(in.Source)
	if err != nil {
		return nil, err
	}
	to, err := c.path(in.Destination)
	if err != nil {
		return nil, err
	}
	// As os.Rename in envd: an existing file at the destination is
	// replaced; missing parents are made.
	fi, err := c.s.m.MoveFile(c.ctx(), c.q.sc, c.q.id, sandbox.MoveRequest{From: from, To: to, User: c.q.user,
		Overwrite: true, Parents: true})
	if err != nil {
		return nil, err
	}
	// The metadata moved with the file (it is on the file); a caller who
	// may read is told it, as envd does.
	if c.q.sc.Can(rights.Read) {
		if e, err := c.statEntry(fi.Path); err == nil {
			return pbEntryResponse{Entry: e}, nil
		}
	}
	e := entryInfo(fi, nil)
	return pbEntryResponse{Entry: &e}, nil
}

func fsRemove(c *rpcCall, in *pbPathRequest) (any, error) {
	p, err := c.path(in.Path)
	if err != nil {
		return nil, err
	}
	if _, err := c.s.m.RemoveFile(c.ctx(), c.q.sc, c.q.id, sandbox.RemoveRequest{Path: p, User: c.q.user, Recursive: true}); err != nil {
		// envd removes as os.RemoveAll does: a path that is not there is
		// removed already. (Unless it is the sandbox that is not there.)
		if errs.CodeOf(err) != errs.CodeNotFound {
			return nil, err
		}
		if _, gerr := c.s.m.Resolve(c.ctx(), c.q.sc, c.q.id, rights.Write); gerr != nil {
			return nil, gerr
		}
	}
	return empty{}, nil
}

// watchEvents maps one Paddock file event onto envd's (a rename within
// the tree is envd's rename of the old name and create of the new one, as
// inotify reports them). done reports the end of the stream and its error.
func (c *rpcCall) watchEvents(root string, ev sandbox.FileEvent, withEntry bool) (out []pbFilesystemEvent, done bool, err error) {
	rel := func(p string) string {
		r := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if r == "" {
			return path.Base(p)
		}
		return r
	}
	entry := func(p string) *pbEntryInfo {
		if !withEntry {
			return nil
		}
		e, _ := c.statEntry(p) // nil: gone again already
		return e
	}
	switch ev.Type {
	case wire.EventReady:
	case wire.EventCreate:
		out = append(out, pbFilesystemEvent{Name: rel(ev.Path), Type: evCreate, Entry: entry(ev.Path)})
	case wire.EventWrite:
		out = append(out, pbFilesystemEvent{Name: rel(ev.Path), Type: evWrite, Entry: entry(ev.Path)})
	case wire.EventRemove:
		out = append(out, pbFilesystemEvent{Name: rel(ev.Path), Type: evRemove})
		if ev.Path == root {
			return out, true, nil // the watched directory is gone: so is the watch
		}
	case wire.EventRename:
		if ev.OldPath != "" {
			out = append(out, pbFilesystemEvent{Name: rel(ev.OldPath), Type: evRename})
		}
		out = append(out, pbFilesystemEvent{Name: rel(ev.Path), Type: evCreate, Entry: entry(ev.Path)})
	case wire.EventOverflow:
		return nil, true, rpcErr(ccDataLoss, "file events were lost (the watcher fell behind): %s", ev.Error)
	case wire.EventError:
		return nil, true, errs.New(errs.CodeUnavailable, "the watch ended: %s", ev.Error)
	}
	return out, false, nil
}

// openWatch starts a watch of a directory; its first event (ready) is
// consumed, so changes from here on are reported.
func (c *rpcCall) openWatch(in *pbWatchRequest) (*sandbox.FileWatch, string, error) {
	p, err := c.path(in.Path)
	if err != nil {
		return nil, "", err
	}
	fi, err := c.s.m.StatFile(c.ctx(), c.q.sc, c.q.id, sandbox.StatRequest{Path: p, User: c.q.user, Follow: true})
	if err != nil {
		return nil, "", err
	}
	if fi.Type != wire.TypeDir {
		return nil, "", errs.Invalid("%s is not a directory", quoteText(p))
	}
	fw, err := c.s.m.WatchFiles(c.ctx(), c.q.sc, c.q.id, sandbox.WatchRequest{Path: p, User: c.q.user, Recursive: in.Recursive})
	if err != nil {
		return nil, "", err
	}
	ev, err := fw.Next()
	if err != nil || ev.Type != wire.EventReady {
		_ = fw.Close()
		if err == nil {
			err = errs.New(errs.CodeUnavailable, "the watch did not start: %s", ev.Error)
		}
		return nil, "", err
	}
	return fw, path.Clean(p), nil
}

func fsWatchDir(c *rpcCall, in *pbWatchRequest, st *stream) error {
	fw, root, err := c.openWatch(in)
	if err != nil {
		return err
	}
	defer fw.Close()
	if err := st.send(pbWatchResponse{Start: &struct{}{}}); err != nil {
		return err
	}
	stop := st.keepalives(parseKeepalive(c.r.Header.Get(hdrKeepalive)), pbWatchResponse{Keepalive: &struct{}{}})
	defer stop()
	for {
		ev, err := fw.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		out, done, err := c.watchEvents(root, ev, in.IncludeEntry)
		for i := range out {
			if err := st.send(pbWatchResponse{Filesystem: &out[i]}); err != nil {
				return err
			}
		}
		if done {
			return err
		}
	}
}
