//go:build linux

package guest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	goruntime "runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// fileServer is the guest's file service. Every path it gets resolves in
// the sandbox's own root, because this process lives in it: a symlink to a
// host path reaches the sandbox's file of that name, never the host's.
type fileServer struct {
	logf    func(format string, args ...any)
	slots   semaphore // concurrent file requests (watches excluded)
	watches semaphore // concurrent watches
}

func newFileServer(logf func(string, ...any)) *fileServer {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &fileServer{logf: logf, slots: make(semaphore, 64), watches: make(semaphore, 16)}
}

// fileRoutes registers the files API on mux.
func (a *Agent) fileRoutes(mux *http.ServeMux) { newFileServer(a.logf).register(mux) }

func (f *fileServer) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/files/read", f.handleRead)
	mux.HandleFunc("PUT /v1/files/write", f.handleWrite)
	mux.HandleFunc("POST /v1/files/stat", jsonOp(f, func(r *guestapi.StatRequest) string { return r.User }, f.stat))
	mux.HandleFunc("POST /v1/files/list", f.handleList)
	mux.HandleFunc("POST /v1/files/mkdir", jsonOp(f, func(r *guestapi.MkdirRequest) string { return r.User }, f.mkdir))
	mux.HandleFunc("POST /v1/files/move", jsonOp(f, func(r *guestapi.MoveRequest) string { return r.User }, f.move))
	mux.HandleFunc("POST /v1/files/remove", jsonOp(f, func(r *guestapi.RemoveRequest) string { return r.User }, f.remove))
	mux.HandleFunc("POST /v1/files/edit", jsonOp(f, func(r *guestapi.EditRequest) string { return r.User }, f.edit))
	mux.HandleFunc("POST /v1/files/find", jsonOp(f, func(r *guestapi.FindRequest) string { return r.User }, f.find))
	mux.HandleFunc("POST /v1/files/search", jsonOp(f, func(r *guestapi.SearchRequest) string { return r.User }, f.search))
	mux.HandleFunc("GET /v1/files/archive", f.handleArchive)
	mux.HandleFunc("PUT /v1/files/archive", f.handleExtract)
	mux.HandleFunc("GET /v1/files/watch", f.handleWatch)
}

// maxFileJSON bounds a JSON request to the file service (an edit carries
// file content).
const maxFileJSON = 2*guestapi.MaxEditBytes + 64<<10

// jsonOp adapts op to a handler: decode, run as the request's user, answer.
func jsonOp[Req, Res any](f *fileServer, user func(*Req) string, op func(ctx context.Context, id identity, r Req) (Res, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		dec := json.NewDecoder(io.LimitReader(r.Body, maxFileJSON))
		if err := dec.Decode(&req); err != nil {
			writeError(w, errs.Invalid("malformed file request"))
			return
		}
		id, err := lookupUser(user(&req))
		if err != nil {
			writeError(w, err)
			return
		}
		if !f.acquire(w) {
			return
		}
		defer f.slots.Release()
		var res Res
		err = asUser(id, func() error {
			var err error
			res, err = op(r.Context(), id, req)
			return err
		})
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, res)
	}
}

func lookupUser(name string) (identity, error) {
	id, ok := identities[orDefault(name, guestapi.UserRoot)]
	if !ok {
		return identity{}, errs.Invalid("unknown user %q (use %q or %q)", clip(name), guestapi.UserRoot, guestapi.UserUser)
	}
	return id, nil
}

// asUser runs fn with the filesystem identity of id, so the kernel checks
// permissions (and owns created files) as that user.
//
// fsuid and fsgid are per thread: fn runs on a fresh goroutine locked to its
// thread, and that thread is never handed back to the scheduler — when the
// goroutine ends locked, the runtime destroys the thread, so no later
// goroutine can inherit the switched identity. The switch away from fsuid 0
// also drops the filesystem capabilities (CAP_DAC_OVERRIDE, CAP_FOWNER...)
// from that thread's effective set, which is what makes the user's
// permissions the user's.
func asUser(id identity, fn func() error) error {
	if id.Uid == 0 && id.Gid == 0 {
		return fn()
	}
	done := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		defer func() {
			if v := recover(); v != nil {
				done <- errs.New(errs.CodeInternal, "file operation failed")
			}
		}()
		if err := setFSIDs(id); err != nil {
			done <- errs.Wrap(errs.CodeInternal, err, "cannot act as user %s", id.Name)
			return
		}
		done <- fn()
	}()
	return <-done
}

// setFSIDs switches the calling thread's filesystem ids and supplementary
// groups to id's (raw system calls: the libc-style wrappers in syscall
// change every thread of the process).
func setFSIDs(id identity) error {
	groups := []uint32{id.Gid}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 1, uintptr(unsafe.Pointer(&groups[0])), 0); e != 0 {
		// A user namespace with setgroups denied: acceptable only if the
		// thread holds no groups that the user lacks.
		n, _, e2 := unix.RawSyscall(unix.SYS_GETGROUPS, 0, 0, 0)
		if e2 != 0 || n != 0 {
			return fmt.Errorf("setgroups: %w", e)
		}
	}
	if _, err := unix.SetfsgidRetGid(int(id.Gid)); err != nil {
		return err
	}
	if _, err := unix.SetfsuidRetUid(int(id.Uid)); err != nil {
		return err
	}
	// setfs[ug]id report no errors; asking again returns the current value.
	if cur, _ := unix.SetfsgidRetGid(int(id.Gid)); cur != int(id.Gid) {
		return fmt.Errorf("setfsgid(%d) did not take (fsgid %d)", id.Gid, cur)
	}
	if cur, _ := unix.SetfsuidRetUid(int(id.Uid)); cur != int(id.Uid) {
		return fmt.Errorf("setfsuid(%d) did not take (fsuid %d)", id.Uid, cur)
	}
	return nil
}

// fileErr words a system call error for the caller, naming the sandbox path
// (never a host path: there is none in this process's view).
func fileErr(p string, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return errs.Wrap(errs.CodeInternal, err, "%s: file operation failed", clip(p))
	}
	q := clip(p)
	switch errno {
	case unix.ENOENT:
		return errs.Wrap(errs.CodeNotFound, err, "%s: no such file or directory", q)
	case unix.EEXIST:
		return errs.Wrap(errs.CodeConflict, err, "%s: already exists", q)
	case unix.ENOTEMPTY:
		return errs.Wrap(errs.CodeConflict, err, "%s: directory is not empty", q)
	case unix.EACCES, unix.EPERM:
		return errs.Wrap(errs.CodeForbidden, err, "%s: permission denied", q)
	case unix.EROFS:
		return errs.Wrap(errs.CodeForbidden, err, "%s: read-only file system", q)
	case unix.ENOTDIR:
		return errs.Wrap(errs.CodeInvalid, err, "%s: a component of the path is not a directory", q)
	case unix.EISDIR:
		return errs.Wrap(errs.CodeInvalid, err, "%s: is a directory", q)
	case unix.ELOOP:
		return errs.Wrap(errs.CodeInvalid, err, "%s: too many levels of symbolic links (or a symlink where none is allowed)", q)
	case unix.ENAMETOOLONG:
		return errs.Wrap(errs.CodeInvalid, err, "%s: name too long", q)
	case unix.ENOSPC, unix.EDQUOT:
		return errs.Wrap(errs.CodeTooLarge, err, "%s: the sandbox's disk is full", q)
	case unix.EXDEV:
		return errs.Wrap(errs.CodeInvalid, err, "%s: crosses a mount point", q)
	case unix.EBUSY:
		return errs.Wrap(errs.CodeConflict, err, "%s: busy (a mount point?)", q)
	case unix.ETXTBSY:
		return errs.Wrap(errs.CodeConflict, err, "%s: is a running executable", q)
	case unix.EMFILE, unix.ENFILE, unix.ENOMEM:
		return errs.Wrap(errs.CodeLimit, err, "%s: the sandbox is out of file descriptors or memory", q)
	case unix.EINVAL:
		return errs.Wrap(errs.CodeInvalid, err, "%s: invalid operation for this file", q)
	case unix.EFBIG:
		return errs.Wrap(errs.CodeTooLarge, err, "%s: file too large", q)
	}
	return errs.Wrap(errs.CodeInternal, err, "%s: %s", q, errno.Error())
}

// cleanPath validates a request path (see guestapi.CleanPath).
func cleanPath(p string) (string, error) { return guestapi.CleanPath(p) }

// acquire takes a file slot for a streaming handler.
func (f *fileServer) acquire(w http.ResponseWriter) bool {
	if !f.slots.TryAcquire() {
		writeError(w, errs.New(errs.CodeLimit, "too many concurrent file operations in this sandbox"))
		return false
	}
	return true
}
