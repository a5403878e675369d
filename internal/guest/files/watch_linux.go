//go:build linux

package files

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// watchQueue bounds the events waiting for a slow client; past it events
// are dropped and one "overflow" event says so.
const watchQueue = 1024

// movePairWait is how long an unpaired IN_MOVED_FROM waits for its
// IN_MOVED_TO before it is reported as a removal (moved out of the tree).
const movePairWait = 20 * time.Millisecond

const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// watchRoute is the watch stream's route: watches have slots of their
// own, since they last.
func (f *Service) watchRoute() http.HandlerFunc {
	return rpc.Streamed(guestapi.MaxHead, func(r *http.Request, req *guestapi.WatchRequest, a *rpc.Answer) error {
		id, err := user.Lookup(req.User)
		if err != nil {
			return err
		}
		p, err := cleanPath(req.Path)
		if err != nil {
			return err
		}
		if !f.watches.TryAcquire() {
			return errs.New(errs.CodeLimit, "too many watches open in this sandbox")
		}
		defer f.watches.Release()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		return asUser(id, func() error {
			wt, err := newWatcher(ctx, p, req.Recursive)
			if err != nil {
				return err
			}
			defer wt.close()
			if err := a.Head(guestapi.Empty{}); err != nil {
				return nil
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer cancel() // a host that is gone ends the watch
				writeEvents(a.F, wt.out, &wt.lost)
			}()
			wt.emit(guestapi.FileEvent{Type: guestapi.EventReady, Path: p})
			wt.loop()
			close(wt.out)
			<-done
			if ctx.Err() == nil {
				_ = a.End(guestapi.Empty{}) // the watch ended on its own (its root went)
			}
			return nil
		})
	})
}

// writeEvents sends events as frames, flushing whenever the queue is
// empty; then, if the producer dropped events meanwhile, it says so.
func writeEvents(fw *guestapi.FrameWriter, out <-chan guestapi.FileEvent, lost *atomic.Bool) {
	for ev := range out {
		b, err := json.Marshal(ev)
		if err != nil {
			continue
		}
		if fw.Queue(guestapi.FrameEvent, b) != nil {
			break
		}
		if len(out) > 0 {
			continue
		}
		if lost.Swap(false) {
			if fw.SendJSON(guestapi.FrameEvent, guestapi.FileEvent{Type: guestapi.EventOverflow, Error: "events were lost: the client read too slowly"}) != nil {
				break
			}
		}
		if fw.Flush() != nil {
			break
		}
	}
	// Drain so the producer never blocks (it does not: it only try-sends).
	for range out {
	}
}

type watcher struct {
	ctx       context.Context
	fd        int
	file      *os.File
	root      string
	recursive bool
	rootDir   bool
	rootWD    int
	dirs      map[int]string // watch descriptor → directory path
	wds       map[string]int // and back
	out       chan guestapi.FileEvent
	lost      atomic.Bool // events dropped since the last overflow event
	limitHit  bool
	lastWrite string
	pending   *moveFrom
	ended     bool
}

type moveFrom struct {
	cookie uint32
	path   string
	dir    bool
	temp   bool // one of the agent's private names (tempName)
	fresh  bool // with temp: its target did not exist
}

func newWatcher(ctx context.Context, p string, recursive bool) (*watcher, error) {
	rfd, err := openAt(unix.AT_FDCWD, p, unix.O_PATH, 0, 0)
	if err != nil {
		return nil, fileErr(p, err)
	}
	defer unix.Close(rfd)
	if err := guardProc(rfd, p); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(rfd, &st); err != nil {
		return nil, fileErr(p, err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, errs.Wrap(errs.CodeLimit, err, "cannot start a watch (too many watches in this sandbox?)")
	}
	w := &watcher{ctx: ctx, fd: fd, file: os.NewFile(uintptr(fd), "inotify"), root: p, recursive: recursive && isDir, rootDir: isDir,
		dirs: map[int]string{}, wds: map[string]int{}, out: make(chan guestapi.FileEvent, watchQueue)}
	wd, err := addWatchFD(fd, rfd, p, watchMask)
	if err != nil {
		w.close()
		if err == unix.ENOSPC {
			return nil, errs.Wrap(errs.CodeLimit, err, "the sandbox's inotify watch limit is reached")
		}
		return nil, fileErr(p, err)
	}
	w.rootWD = wd
	w.dirs[wd], w.wds[p] = p, wd
	if w.recursive {
		dfd, err := openDir(p)
		if err != nil {
			w.close()
			return nil, err
		}
		w.addTree(dfd, p, st.Dev, false, 0)
		unix.Close(dfd)
	}
	return w, nil
}

// addWatchFD watches the object open at fd (an O_PATH descriptor that was
// resolved without magic links), through this process's own fd link, so
// the watch lands on exactly what was checked.
func addWatchFD(ifd, fd int, p string, mask uint32) (int, error) {
	wd, err := unix.InotifyAddWatch(ifd, "/proc/self/fd/"+strconv.Itoa(fd), mask)
	if err == unix.ENOENT {
		wd, err = unix.InotifyAddWatch(ifd, p, mask|unix.IN_DONT_FOLLOW)
	}
	return wd, err
}

// addTree watches every directory below the one open at fd. With announce,
// entries found are reported as created (they appeared in a new directory
// before its watch existed).
func (w *watcher) addTree(fd int, p string, dev uint64, announce bool, depth int) {
	if depth > maxArchiveDepth {
		return
	}
	names, _, err := readNames(fd)
	if err != nil {
		return
	}
	for _, name := range names {
		cp := path.Join(p, name)
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if announce {
			w.emit(guestapi.FileEvent{Type: guestapi.EventCreate, Path: cp, Entry: typeOf(st.Mode)})
		}
		if !isDir {
			continue
		}
		cfd, err := openAt(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0)
		if err != nil {
			continue
		}
		if (st.Dev != dev && pseudoFS(cfd)) || guardProc(cfd, cp) != nil || !w.watchDir(cfd, cp) {
			unix.Close(cfd)
			continue
		}
		w.addTree(cfd, cp, st.Dev, announce, depth+1)
		unix.Close(cfd)
	}
}

// watchDir adds a watch for the directory open at fd.
func (w *watcher) watchDir(fd int, p string) bool {
	if len(w.dirs) >= guestapi.MaxWatchDirs {
		if !w.limitHit {
			w.limitHit = true
			w.emit(guestapi.FileEvent{Type: guestapi.EventOverflow,
				Error: "more than " + strconv.Itoa(guestapi.MaxWatchDirs) + " directories: changes in some are not reported"})
		}
		return false
	}
	wd, err := addWatchFD(w.fd, fd, p, watchMask|unix.IN_ONLYDIR)
	if err != nil {
		if err == unix.ENOSPC && !w.limitHit {
			w.limitHit = true
			w.emit(guestapi.FileEvent{Type: guestapi.EventOverflow, Error: "the sandbox's inotify watch limit is reached: changes in some directories are not reported"})
		}
		return false
	}
	if old, ok := w.dirs[wd]; ok {
		delete(w.wds, old) // the same directory under a new name
	}
	w.dirs[wd], w.wds[p] = p, wd
	return true
}

func (w *watcher) close() {
	if w.file != nil {
		w.file.Close()
		w.file = nil
	}
}

// emit queues an event without ever blocking the inotify reader; when the
// queue is full the event is dropped and the writer reports the loss.
func (w *watcher) emit(ev guestapi.FileEvent) {
	if ev.Type == guestapi.EventWrite {
		if ev.Path == w.lastWrite {
			return // a burst of writes to one file is one event
		}
		w.lastWrite = ev.Path
	} else {
		w.lastWrite = ""
	}
	select {
	case w.out <- ev:
	default:
		w.lost.Store(true)
	}
}

// loop reads inotify events until the context ends or the root goes.
func (w *watcher) loop() {
	stop := context.AfterFunc(w.ctx, func() { _ = w.file.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 64<<10)
	for !w.ended {
		n, err := w.file.Read(buf)
		if err != nil {
			if w.ctx.Err() != nil {
				return
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				w.flushPending()
				_ = w.file.SetReadDeadline(time.Time{})
				if w.ctx.Err() != nil {
					return
				}
				continue
			}
			w.emit(guestapi.FileEvent{Type: guestapi.EventOverflow, Error: "the watch failed"})
			return
		}
		w.batch(buf[:n])
		if w.pending != nil {
			_ = w.file.SetReadDeadline(time.Now().Add(movePairWait))
		}
	}
}

func (w *watcher) batch(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent && !w.ended {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return
		}
		name := ""
		if ev.Len > 0 {
			name = strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00")
		}
		w.handle(int(ev.Wd), ev.Mask, ev.Cookie, name)
		b = b[end:]
	}
}

func (w *watcher) handle(wd int, mask, cookie uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.flushPending()
		w.emit(guestapi.FileEvent{Type: guestapi.EventOverflow, Error: "the kernel's event queue overflowed"})
		return
	}
	dir, ok := w.dirs[wd]
	if !ok {
		return
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, wd)
		if w.wds[dir] == wd {
			delete(w.wds, dir)
		}
		return
	}
	p := dir
	if name != "" {
		p = path.Join(dir, name)
	}
	isDir := mask&unix.IN_ISDIR != 0
	entry := guestapi.TypeFile
	if isDir {
		entry = guestapi.TypeDir
	}
	// A pending move-from pairs only with the very next event.
	if w.pending != nil && !(mask&unix.IN_MOVED_TO != 0 && cookie == w.pending.cookie) {
		w.flushPending()
	}
	fresh, temp := isTempName(name)
	if temp && mask&(unix.IN_CREATE|unix.IN_MODIFY|unix.IN_DELETE|unix.IN_MOVED_TO) != 0 {
		return // the agent's own staging: never reported
	}
	switch {
	case mask&unix.IN_MOVED_FROM != 0:
		w.pending = &moveFrom{cookie: cookie, path: p, dir: isDir, temp: temp, fresh: fresh}
	case mask&unix.IN_MOVED_TO != 0:
		if w.pending != nil {
			old := w.pending
			w.pending = nil
			if old.temp {
				w.landed(p, old.dir, old.fresh)
				return
			}
			if old.dir {
				w.renameDirs(old.path, p)
			}
			w.emit(guestapi.FileEvent{Type: guestapi.EventRename, OldPath: old.path, Path: p, Entry: w.entryOf(p, entry)})
			return
		}
		w.emit(guestapi.FileEvent{Type: guestapi.EventCreate, Path: p, Entry: w.entryOf(p, entry)})
		if isDir && w.recursive {
			w.newDir(p)
		}
	case mask&unix.IN_CREATE != 0:
		w.emit(guestapi.FileEvent{Type: guestapi.EventCreate, Path: p, Entry: w.entryOf(p, entry)})
		if isDir && w.recursive {
			w.newDir(p)
		}
	case mask&unix.IN_MODIFY != 0:
		w.emit(guestapi.FileEvent{Type: guestapi.EventWrite, Path: p, Entry: guestapi.TypeFile})
	case mask&unix.IN_DELETE != 0:
		w.emit(guestapi.FileEvent{Type: guestapi.EventRemove, Path: p, Entry: entry})
	case mask&unix.IN_DELETE_SELF != 0:
		if wd == w.rootWD {
			e := guestapi.TypeFile
			if w.rootDir {
				e = guestapi.TypeDir
			}
			w.emit(guestapi.FileEvent{Type: guestapi.EventRemove, Path: w.root, Entry: e})
			w.ended = true
		}
	case mask&unix.IN_MOVE_SELF != 0:
		if wd == w.rootWD {
			w.emit(guestapi.FileEvent{Type: guestapi.EventRemove, Path: w.root, Error: "the watched path was moved away"})
			w.ended = true
		}
	}
}

// landed reports a private file or directory renamed onto p as what the
// caller did: a new target is created, a file's content written.
func (w *watcher) landed(p string, dir, fresh bool) {
	entry := guestapi.TypeFile
	if dir {
		entry = guestapi.TypeDir
	}
	if fresh {
		w.emit(guestapi.FileEvent{Type: guestapi.EventCreate, Path: p, Entry: entry})
	}
	if dir {
		if w.recursive {
			w.newDir(p)
		}
		return
	}
	w.lastWrite = "" // a whole write, not part of a burst: never merged with the last
	w.emit(guestapi.FileEvent{Type: guestapi.EventWrite, Path: p, Entry: entry})
}

// entryOf names what p is now (falling back to what inotify said).
func (w *watcher) entryOf(p, fallback string) string {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return fallback
	}
	return typeOf(st.Mode)
}

// flushPending reports an unpaired move-from: the entry left the tree.
func (w *watcher) flushPending() {
	if w.pending == nil {
		return
	}
	old := w.pending
	w.pending = nil
	if old.temp {
		return
	}
	entry := guestapi.TypeFile
	if old.dir {
		entry = guestapi.TypeDir
		w.dropDirs(old.path)
	}
	w.emit(guestapi.FileEvent{Type: guestapi.EventRemove, Path: old.path, Entry: entry})
}

// newDir watches a directory that appeared, and what is already in it.
func (w *watcher) newDir(p string) {
	fd, err := openAt(unix.AT_FDCWD, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || pseudoFS(fd) || guardProc(fd, p) != nil {
		return
	}
	if !w.watchDir(fd, p) {
		return
	}
	w.addTree(fd, p, st.Dev, true, 0)
}

// renameDirs rewrites the paths of watched directories under old.
func (w *watcher) renameDirs(old, new string) {
	for wd, d := range w.dirs {
		if d == old || strings.HasPrefix(d, old+"/") {
			nd := new + strings.TrimPrefix(d, old)
			delete(w.wds, d)
			w.dirs[wd], w.wds[nd] = nd, wd
		}
	}
}

// dropDirs stops watching directories that left the tree.
func (w *watcher) dropDirs(old string) {
	for wd, d := range w.dirs {
		if d == old || strings.HasPrefix(d, old+"/") {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.dirs, wd)
			delete(w.wds, d)
		}
	}
}
