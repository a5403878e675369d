package dockerfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// view is the merged tree of a layer stack (top first), read the way
// overlayfs shows it: the top layer having a path wins, a 0/0 character
// device hides it, an opaque directory hides the layers below. No
// symlink inside the stack is ever followed.
type view []string

var errHidden = errors.New("not in the image")

// lstat finds rel ("a/b", "" for the root) in the view.
func (v view) lstat(rel string) (string, os.FileInfo, error) {
	parts := []string{}
	if rel != "" {
		parts = strings.Split(rel, "/")
	}
	for _, l := range v {
		p := l
		hidden, opaque := false, false
		var fi os.FileInfo
		var err error
		if len(parts) == 0 {
			if fi, err = os.Lstat(l); err == nil {
				return l, fi, nil
			}
			continue
		}
		for i, c := range parts {
			p = filepath.Join(p, c)
			fi, err = os.Lstat(p)
			if err != nil {
				break
			}
			if isWhiteout(fi) {
				hidden = true
				break
			}
			if i < len(parts)-1 {
				if !fi.IsDir() {
					hidden = true // a file or symlink shadows the directory below
					break
				}
				if isOpaque(p) {
					opaque = true
				}
			}
		}
		if err == nil && !hidden {
			return p, fi, nil
		}
		if hidden || opaque {
			break
		}
	}
	return "", nil, errHidden
}

// readDir lists the names under directory rel in the view.
func (v view) readDir(rel string) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	for _, l := range v {
		p := filepath.Join(l, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			break
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if seen[e.Name()] {
				continue
			}
			seen[e.Name()] = true
			if fi, err := e.Info(); err == nil && isWhiteout(fi) {
				continue
			}
			names = append(names, e.Name())
		}
		if isOpaque(p) {
			break
		}
	}
	sort.Strings(names)
	return names, nil
}

func isWhiteout(fi os.FileInfo) bool {
	if fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Rdev == 0
}

func isOpaque(p string) bool {
	buf := make([]byte, 2)
	for _, x := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		if n, err := unix.Lgetxattr(p, x, buf); err == nil && n == 1 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

// owner overrides the owner of copied entries (COPY --chown).
type owner struct {
	set      bool
	uid, gid int
}

// copier copies trees into a staging directory, with a byte budget.
type copier struct {
	budget int64
	own    owner
	chmod  *os.FileMode
	buf    []byte
	ignore func(rel string) bool // .dockerignore, for context copies
}

var errBudget = errors.New("the copied files are over the layer size limit")

// copyEntry copies src (a host path: context or layer) to dst, recursing
// into directories; fromView lists directories through v (for a stage's
// merged tree) instead of the host directory.
func (c *copier) copyEntry(src, dst string, v view, rel string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	uid, gid := 0, 0
	if v != nil && st != nil {
		uid, gid = int(st.Uid), int(st.Gid) // from a stage: keep its owners
	}
	if c.own.set {
		uid, gid = c.own.uid, c.own.gid
	}
	mode := fi.Mode().Perm() | fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
	if c.chmod != nil {
		mode = *c.chmod
	}
	switch {
	case fi.IsDir():
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		var names []string
		if v != nil {
			if names, err = v.readDir(rel); err != nil {
				return err
			}
		} else {
			ents, err := os.ReadDir(src)
			if err != nil {
				return err
			}
			for _, e := range ents {
				names = append(names, e.Name())
			}
		}
		for _, n := range names {
			childSrc := filepath.Join(src, n)
			childRel := path.Join(rel, n)
			if v != nil {
				p, _, err := v.lstat(childRel)
				if err != nil {
					continue
				}
				childSrc = p
			} else if c.ignore != nil && c.ignore(childRel) {
				continue
			}
			if err := c.copyEntry(childSrc, filepath.Join(dst, n), v, childRel); err != nil {
				return err
			}
		}
		if err := os.Lchown(dst, uid, gid); err != nil {
			return err
		}
		if err := os.Chmod(dst, mode); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
		return os.Lchown(dst, uid, gid)
	case fi.Mode().IsRegular():
		c.budget -= fi.Size()
		if c.budget < 0 {
			return errBudget
		}
		in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.CopyBuffer(out, in, c.buf); err != nil {
			out.Close()
			return err
		}
		if err := out.Chown(uid, gid); err != nil {
			out.Close()
			return err
		}
		if err := out.Chmod(mode); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	default:
		return nil // sockets, devices, fifos are not copied
	}
}

// mkParents creates rel's parent directories under stage (the layer's
// staging root), copying each one's metadata from the image when it
// exists there: a directory in a new layer replaces the lower one's
// owner and mode in the overlay, so it must keep them. It records each
// directory's time in times: restoreTimes puts them back once the
// layer's entries exist, so the layer's bytes do not depend on when it
// was built (the step cache keys on them).
func mkParents(stage string, v view, rel string, times map[string]time.Time) error {
	dir := path.Dir(rel)
	if dir == "." || dir == "/" || dir == "" {
		return nil
	}
	parts := strings.Split(dir, "/")
	cur := ""
	for _, p := range parts {
		cur = path.Join(cur, p)
		full := filepath.Join(stage, cur)
		if _, err := os.Lstat(full); err == nil {
			continue
		}
		if err := os.Mkdir(full, 0o755); err != nil {
			return err
		}
		if _, fi, err := v.lstat(cur); err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("/%s is not a directory in the image", cur)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if err := os.Chown(full, int(st.Uid), int(st.Gid)); err != nil {
				return err
			}
			if err := os.Chmod(full, fi.Mode().Perm()|fi.Mode()&(os.ModeSetgid|os.ModeSticky)); err != nil {
				return err
			}
			times[cur] = fi.ModTime()
		} else {
			times[cur] = time.Unix(0, 0)
		}
	}
	return nil
}

// restoreTimes sets the recorded directory times.
func restoreTimes(stage string, times map[string]time.Time) {
	for p, t := range times {
		os.Chtimes(filepath.Join(stage, p), t, t)
	}
}
