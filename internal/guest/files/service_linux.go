//go:build linux

package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	goruntime "runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Service is the guest's file service. Every path it gets resolves in
// the sandbox's own root, because this process lives in it: a symlink to a
// host path reaches the sandbox's file of that name, never the host's.
type Service struct {
	logf    func(format string, args ...any)
	slots   rpc.Slots // concurrent file requests (watches excluded)
	watches rpc.Slots // concurrent watches
}

// New returns the file service; logf (or nil) gets what fails half-way.
func New(logf func(string, ...any)) *Service {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Service{logf: logf, slots: rpc.NewSlots(64), watches: rpc.NewSlots(16)}
}

// Register serves the file routes on m.
func (f *Service) Register(m *rpc.Mux) {
	m.Handle(guestapi.RouteFileRead, fileStream(f, guestapi.MaxHead, func(r *guestapi.ReadRequest) string { return r.User }, f.read))
	m.Handle(guestapi.RouteFileLines, fileOp(f, guestapi.MaxHead, func(r *guestapi.LinesRequest) string { return r.User }, f.lines))
	m.Handle(guestapi.RouteFileWrite, fileUpload(f, guestapi.MaxHead, func(r *guestapi.WriteRequest) string { return r.User }, f.write))
	m.Handle(guestapi.RouteFileStat, fileOp(f, guestapi.MaxHead, func(r *guestapi.StatRequest) string { return r.User }, f.stat))
	m.Handle(guestapi.RouteFileList, fileStream(f, guestapi.MaxHead, func(r *guestapi.ListRequest) string { return r.User }, f.sendList))
	m.Handle(guestapi.RouteFileMkdir, fileOp(f, guestapi.MaxHead, func(r *guestapi.MkdirRequest) string { return r.User }, f.mkdir))
	m.Handle(guestapi.RouteFileMove, fileOp(f, guestapi.MaxHead, func(r *guestapi.MoveRequest) string { return r.User }, f.move))
	m.Handle(guestapi.RouteFileRemove, fileOp(f, guestapi.MaxHead, func(r *guestapi.RemoveRequest) string { return r.User }, f.remove))
	m.Handle(guestapi.RouteFileEdit, fileOp(f, maxEditHead, func(r *guestapi.EditRequest) string { return r.User }, f.edit))
	m.Handle(guestapi.RouteFileFind, fileOp(f, guestapi.MaxHead, func(r *guestapi.FindRequest) string { return r.User }, f.find))
	m.Handle(guestapi.RouteFileSearch, fileOp(f, guestapi.MaxHead, func(r *guestapi.SearchRequest) string { return r.User }, f.search))
	m.Handle(guestapi.RouteFileArchive, fileStream(f, guestapi.MaxHead, func(r *guestapi.ArchiveRequest) string { return r.User }, f.archive))
	m.Handle(guestapi.RouteFileExtract, fileUpload(f, guestapi.MaxHead, func(r *guestapi.ExtractRequest) string { return r.User }, f.extract))
	m.Handle(guestapi.RouteFileWatch, f.watchRoute())
	m.Handle(guestapi.RouteFileMeta, fileOp(f, guestapi.MaxHead, func(r *guestapi.MetadataRequest) string { return r.User }, f.setMetadata))
}

// maxEditHead bounds an edit request (it carries file content).
const maxEditHead = 2*guestapi.MaxEditBytes + 64<<10

// fileOp adapts op to a unary route: the head, a file slot, op run as the
// request's user.
func fileOp[Req, Res any](f *Service, maxHead int, who func(*Req) string, op func(ctx context.Context, id user.ID, req Req) (Res, error)) http.HandlerFunc {
	return fileUpload(f, maxHead, who, func(ctx context.Context, id user.ID, req Req, _ io.Reader) (Res, error) {
		return op(ctx, id, req)
	})
}

// fileUpload is fileOp for a route that takes a body.
func fileUpload[Req, Res any](f *Service, maxHead int, who func(*Req) string, op func(ctx context.Context, id user.ID, req Req, body io.Reader) (Res, error)) http.HandlerFunc {
	return rpc.Unary(maxHead, func(r *http.Request, req *Req) (Res, error) {
		var res Res
		err := f.as(who(req), func(id user.ID) error {
			var err error
			res, err = op(r.Context(), id, *req, r.Body)
			return err
		})
		return res, err
	})
}

// fileStream is fileOp for a route whose answer is a stream.
func fileStream[Req any](f *Service, maxHead int, who func(*Req) string, op func(ctx context.Context, id user.ID, req Req, a *rpc.Answer) error) http.HandlerFunc {
	return rpc.Streamed(maxHead, func(r *http.Request, req *Req, a *rpc.Answer) error {
		return f.as(who(req), func(id user.ID) error { return op(r.Context(), id, *req, a) })
	})
}

// as runs fn with a file slot, as the named user.
func (f *Service) as(name string, fn func(id user.ID) error) error {
	id, err := user.Lookup(name)
	if err != nil {
		return err
	}
	if !f.slots.TryAcquire() {
		return errBusy
	}
	defer f.slots.Release()
	return asUser(id, func() error { return fn(id) })
}

var errBusy = errs.New(errs.CodeLimit, "too many concurrent file operations in this sandbox")

// asUser runs fn with the filesystem identity of id, so the kernel checks
// permissions (and owns created files) as that user.
//
// fsuid and fsgid are per thread: fn runs on a fresh goroutine locked to its
// thread, and that thread is never handed back to the scheduler — when the
// goroutine ends locked, the runtime destroys the thread, so no later
// goroutine can inherit the switched user.ID. The switch away from fsuid 0
// also drops the filesystem capabilities (CAP_DAC_OVERRIDE, CAP_FOWNER...)
// from that thread's effective set, which is what makes the user's
// permissions the user's.
func asUser(id user.ID, fn func() error) error {
	if id.UID == 0 && id.GID == 0 {
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
func setFSIDs(id user.ID) error {
	groups := []uint32{id.GID}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 1, uintptr(unsafe.Pointer(&groups[0])), 0); e != 0 {
		// A user namespace with setgroups denied: acceptable only if the
		// thread holds no groups that the user lacks.
		n, _, e2 := unix.RawSyscall(unix.SYS_GETGROUPS, 0, 0, 0)
		if e2 != 0 || n != 0 {
			return fmt.Errorf("setgroups: %w", e)
		}
	}
	if _, err := unix.SetfsgidRetGid(int(id.GID)); err != nil {
		return err
	}
	if _, err := unix.SetfsuidRetUid(int(id.UID)); err != nil {
		return err
	}
	// setfs[ug]id report no errors; asking again returns the current value.
	if cur, _ := unix.SetfsgidRetGid(int(id.GID)); cur != int(id.GID) {
		return fmt.Errorf("setfsgid(%d) did not take (fsgid %d)", id.GID, cur)
	}
	if cur, _ := unix.SetfsuidRetUid(int(id.UID)); cur != int(id.UID) {
		return fmt.Errorf("setfsuid(%d) did not take (fsuid %d)", id.UID, cur)
	}
	return nil
}

// errnoWords is how fileErr words an errno: its code and what it means.
var errnoWords = map[syscall.Errno]struct {
	code errs.Code
	what string
}{
	unix.ENOENT:       {errs.CodeNotFound, "no such file or directory"},
	unix.EEXIST:       {errs.CodeConflict, "already exists"},
	unix.ENOTEMPTY:    {errs.CodeConflict, "directory is not empty"},
	unix.EACCES:       {errs.CodeForbidden, "permission denied"},
	unix.EPERM:        {errs.CodeForbidden, "permission denied"},
	unix.EROFS:        {errs.CodeForbidden, "read-only file system"},
	unix.ENOTDIR:      {errs.CodeInvalid, "a component of the path is not a directory"},
	unix.EISDIR:       {errs.CodeInvalid, "is a directory"},
	unix.ELOOP:        {errs.CodeInvalid, "too many levels of symbolic links (or a symlink where none is allowed)"},
	unix.ENAMETOOLONG: {errs.CodeInvalid, "name too long"},
	unix.ENOSPC:       {errs.CodeTooLarge, "the sandbox's disk is full"},
	unix.EDQUOT:       {errs.CodeTooLarge, "the sandbox's disk is full"},
	unix.EXDEV:        {errs.CodeInvalid, "crosses a mount point"},
	unix.EBUSY:        {errs.CodeConflict, "busy (a mount point?)"},
	unix.ETXTBSY:      {errs.CodeConflict, "is a running executable"},
	unix.EMFILE:       {errs.CodeLimit, "the sandbox is out of file descriptors or memory"},
	unix.ENFILE:       {errs.CodeLimit, "the sandbox is out of file descriptors or memory"},
	unix.ENOMEM:       {errs.CodeLimit, "the sandbox is out of file descriptors or memory"},
	unix.EINVAL:       {errs.CodeInvalid, "invalid operation for this file"},
	unix.EFBIG:        {errs.CodeTooLarge, "file too large"},
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
	if w, ok := errnoWords[errno]; ok {
		return errs.Wrap(w.code, err, "%s: %s", q, w.what)
	}
	return errs.Wrap(errs.CodeInternal, err, "%s: %s", q, errno.Error())
}

// cleanPath validates a request path (see guestapi.CleanPath).
func cleanPath(p string) (string, error) { return guestapi.CleanPath(p) }
