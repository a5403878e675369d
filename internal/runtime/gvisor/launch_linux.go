//go:build linux

package gvisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/harden"
)

// rootfs says what runsc's gofer serves: the template's trees, read-only
// inside a private mount namespace. gVisor's overlay (--overlay2) keeps
// every write of the sandbox in its own upper layer; on the host, the
// root is an overlayfs whose upper (in the sandbox directory) only ever
// receives the mount points the gofer makes for runsc's bind mounts, and
// the other trees are read-only binds — so nothing, not even a bug in
// gVisor's overlay or gofer, can write to a template other sandboxes
// share.
//
// An image template has no root tree but a stack of store layers (Layers,
// top first): they are the lowers of that same host overlay, mounted by
// host root without userxattr, so the store's whiteouts (0/0 character
// devices) and opaque directories (trusted.overlay.opaque) apply, and the
// gofer serves the merged image. Nothing is copied at create.
type rootfs struct {
	Target string    // the mount point (empty directory) of the root tree
	Upper  string    // directory for the host overlay's upper and work dirs
	Root   string    // the template's root tree ("" for an image template)
	Layers []string  // an image template's layer directories, top first
	Trees  []subtree // the template's other trees
	// Nested (a sandbox with volumes): the trees are bound inside Target,
	// so that gVisor's root overlay covers them and no writable bind of
	// the spec but the volumes is left (volumes_linux.go).
	Nested  bool
	Volumes []volumeBind
}

// lowers are the host overlay's lower layers, top first.
func (r rootfs) lowers() []string {
	if len(r.Layers) > 0 {
		return r.Layers
	}
	return []string{r.Root}
}

// mount assembles r in the calling thread's mount namespace.
func (r rootfs) mount() error {
	upper, work := filepath.Join(r.Upper, "upper"), filepath.Join(r.Upper, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	// overlayfs shows its upper directory's mode and owner as the root's:
	// a 0700 upper would leave the sandbox's user unable to resolve any
	// path (EACCES on /bin/sh). The upper takes the (top) template root's.
	lowers := r.lowers()
	var st unix.Stat_t
	if err := unix.Stat(lowers[0], &st); err != nil {
		return fmt.Errorf("template root: %w", err)
	}
	if err := unix.Chmod(upper, st.Mode&0o7777); err != nil {
		return fmt.Errorf("template root: %w", err)
	}
	if err := unix.Chown(upper, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("template root: %w", err)
	}
	for _, p := range append([]string{upper, work}, lowers...) {
		if strings.ContainsAny(p, ",:\\") {
			return fmt.Errorf("path %q has a character overlayfs cannot take", p)
		}
	}
	if err := mountOverlay(r.Target, lowers, upper, work); err != nil {
		return fmt.Errorf("template root: %w", err)
	}
	for _, t := range r.Trees {
		if r.Nested {
			if err := bindNested(t.Source, r.Target, t.Path); err != nil {
				return fmt.Errorf("template tree %s: %w", t.Path, err)
			}
			continue
		}
		if err := bindReadOnly(t.Source, t.At); err != nil {
			return fmt.Errorf("template tree %s: %w", t.Path, err)
		}
	}
	for _, v := range r.Volumes {
		if err := bindVolume(v); err != nil {
			return fmt.Errorf("volume %s: %w", v.Name, err)
		}
	}
	return nil
}

// mountOverlay mounts an overlay of lowers (top first) under upper at
// target, nosuid and nodev. One lower (a root tree) is mount(2)'s option
// string; a layer stack goes through the new mount API, one
// fsconfig("lowerdir+") per layer (Linux 6.8+), so up to the 128 layers
// of an image template never run into the option string's one-page limit.
// An older kernel still mounts a stack whose option string fits.
func mountOverlay(target string, lowers []string, upper, work string) error {
	opts := "lowerdir=" + strings.Join(lowers, ":") + ",upperdir=" + upper + ",workdir=" + work
	if len(lowers) == 1 {
		if err := unix.Mount("paddock", target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mount overlay: %w", err)
		}
		return nil
	}
	fd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen overlay: %w", err)
	}
	defer unix.Close(fd)
	for _, l := range lowers {
		if err := unix.FsconfigSetString(fd, "lowerdir+", l); err != nil {
			if errors.Is(err, unix.EINVAL) && len(opts) < 4000 {
				// No lowerdir+ (before 6.8): the classic option string.
				if err := unix.Mount("paddock", target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
					return fmt.Errorf("mount overlay: %w", err)
				}
				return nil
			}
			if errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("overlay lower layer: %w (an image template of %d layers needs Linux 6.8 or later)", err, len(lowers))
			}
			return fmt.Errorf("overlay lower layer: %w", err)
		}
	}
	for k, v := range map[string]string{"upperdir": upper, "workdir": work} {
		if err := unix.FsconfigSetString(fd, k, v); err != nil {
			return fmt.Errorf("overlay %s: %w", k, err)
		}
	}
	if err := unix.FsconfigCreate(fd); err != nil {
		return fmt.Errorf("mount overlay: %w", err)
	}
	mfd, err := unix.Fsmount(fd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fmt.Errorf("fsmount overlay: %w", err)
	}
	defer unix.Close(mfd)
	if err := unix.MoveMount(mfd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach overlay: %w", err)
	}
	return nil
}

// bindReadOnly attaches a recursive, read-only, nosuid, nodev clone of
// src at dst (an existing directory).
func bindReadOnly(src, dst string) error {
	fd, err := cloneReadOnly(src)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// cloneReadOnly returns a detached, recursive, read-only, nosuid, nodev
// clone of the tree at src, to attach with move_mount.
func cloneReadOnly(src string) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return -1, fmt.Errorf("open_tree: %w", err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("mount_setattr: %w", err)
	}
	return fd, nil
}

// inMountNS runs fn on a fresh locked OS thread that first unshares a
// private mount namespace and runs setup there. Processes fn starts
// (os/exec forks from the calling thread) inherit that namespace; the
// thread is never unlocked, so the Go runtime discards it when fn returns
// and the namespace lives on only in those processes.
func inMountNS(setup func() error, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
			done <- fmt.Errorf("unshare mount namespace: %w", err)
			return
		}
		// Nothing mounted here may propagate to the host.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- fmt.Errorf("make mounts private: %w", err)
			return
		}
		if err := setup(); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}

// netNS is a new network namespace held by a locked OS thread, for as long
// as the sandbox's runsc needs to find it by path.
type netNS struct {
	Tid  int
	Path string
	stop chan struct{}
}

// newNetNS starts a thread in a new network namespace (owned by the
// initial user namespace, so nothing in the sandbox can change its routes
// or filtering). Release ends the thread; the namespace then lives on only
// in processes that joined it.
func newNetNS() (*netNS, error) {
	type res struct {
		tid int
		err error
	}
	ch := make(chan res, 1)
	n := &netNS{stop: make(chan struct{})}
	go func() {
		goruntime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- res{err: fmt.Errorf("unshare network namespace: %w", err)}
			return
		}
		// runsc hands gVisor's netstack the namespace's interfaces as they
		// are: with lo down the sandbox has no loopback at all, and its
		// 127.0.0.1 traffic follows the default route out of the veth.
		if err := harden.LoopbackUp(); err != nil {
			ch <- res{err: fmt.Errorf("loopback: %w", err)}
			return
		}
		ch <- res{tid: unix.Gettid()}
		<-n.stop
	}()
	r := <-ch
	if r.err != nil {
		return nil, r.err
	}
	n.Tid = r.tid
	n.Path = "/proc/" + strconv.Itoa(os.Getpid()) + "/task/" + strconv.Itoa(r.tid) + "/ns/net"
	return n, nil
}

func (n *netNS) Release() {
	if n != nil {
		close(n.stop)
	}
}

// command builds a runsc invocation with the backend's global flags.
func (b *Backend) command(args ...string) *exec.Cmd {
	cmd := exec.Command(b.runsc, append(b.globalFlags(), args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Dir = "/"
	return cmd
}
