package template

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// hostBuilderVersion changes whenever buildHostRootfs would produce a
// different skeleton; Open rebuilds skeletons stamped with another one.
const hostBuilderVersion = 1

// stampPath holds the builder version and host fingerprint in the skeleton.
const stampPath = "etc/.paddock-template"

// Copy limits for the /etc allowlist (a host /etc entry outside them is
// skipped, never truncated).
const (
	maxCopyFile    = 4 << 20  // one file
	maxCopyTotal   = 64 << 20 // all files
	maxCopyEntries = 20000
	maxCopyDepth   = 16
	maxLinkTarget  = 4095
)

// topLevelDirs are host directories that are either merged-usr symlinks
// (reproduced as the same symlink) or real directories (overlaid).
var topLevelDirs = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"}

type mountDir struct {
	path     string
	mode     fs.FileMode
	uid, gid int
}

// mountDirs must exist in every template: the guest mounts or populates
// them, and a read-only lower layer cannot gain them later. Parents first.
var mountDirs = []mountDir{
	{path: "proc", mode: 0o555},
	{path: "sys", mode: 0o555},
	{path: "dev", mode: 0o755},
	{path: "tmp", mode: 0o777 | fs.ModeSticky},
	{path: "workspace", mode: 0o777},
	{path: "home", mode: 0o755},
	{path: "home/user", mode: 0o755, uid: UserUID, gid: UserGID},
	{path: "root", mode: 0o700},
	{path: "usr", mode: 0o755},
	{path: "etc", mode: 0o755},
	{path: "var", mode: 0o755},
	{path: "var/tmp", mode: 0o777 | fs.ModeSticky},
	{path: "var/lib", mode: 0o755},
	{path: "var/cache", mode: 0o755},
	{path: "var/log", mode: 0o755},
	{path: "run", mode: 0o755},
	{path: "mnt", mode: 0o755},
	{path: "opt", mode: 0o755},
	{path: "srv", mode: 0o755},
}

// etcAllowlist are the host /etc entries (relative to /etc) copied into
// the skeleton when present: configuration that programs from the host's
// /usr expect and that says nothing about the host's identity or secrets.
// Everything else in the host's /etc is left out, by construction.
var etcAllowlist = []string{
	"alternatives", // Debian: /usr/bin/vi, awk, editor, ... point into it
	"bash.bashrc",
	"ca-certificates.conf",
	"debian_version",
	"environment",
	"ethertypes",
	"fonts", // fontconfig (Chromium)
	"inputrc",
	"issue",
	"ld.so.cache",
	"ld.so.conf",
	"ld.so.conf.d",
	"localtime",
	"login.defs",
	"magic",
	"matplotlibrc", // Debian's matplotlib reads only /etc/matplotlibrc (no data-path fallback)
	"manpath.config",
	"mime.types",
	"profile",
	"profile.d",
	"protocols",
	"rpc",
	"services",
	"ssl/openssl.cnf",
	"terminfo",
	"timezone",
	"vim",
	"xdg",
}

// etcAllowGlob adds Python's per-version configuration directories.
const etcAllowGlob = "python3*"

// deniedName is defence in depth under the allowlisted directories: names
// that hold accounts, credentials or host identity are never copied, even
// if a package dropped one into, say, /etc/xdg.
func deniedName(name string) bool {
	l := strings.ToLower(name)
	switch l {
	case "passwd", "passwd-", "shadow", "shadow-", "group", "group-", "gshadow", "gshadow-",
		"opasswd", "subuid", "subgid", "sudoers", "sudoers.d", "ssh", "private", "machine-id",
		"hostname", "hosts", "resolv.conf", ".netrc", ".pgpass", ".git-credentials", "authorized_keys":
		return true
	}
	for _, s := range []string{".key", ".pem", ".p12", ".pfx", ".keytab", ".jks", ".keystore", ".kdbx"} {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	for _, s := range []string{"secret", "credential", "password", "token", "krb5", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"} {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// hostEtcEntries returns the allowlisted entries present in hostRoot/etc.
func hostEtcEntries(hostRoot string) []string {
	etc := filepath.Join(hostRoot, "etc")
	var out []string
	for _, e := range etcAllowlist {
		if _, err := os.Lstat(filepath.Join(etc, e)); err == nil {
			out = append(out, e)
		}
	}
	if ents, err := os.ReadDir(etc); err == nil {
		for _, e := range ents {
			if ok, _ := path.Match(etcAllowGlob, e.Name()); ok {
				out = append(out, e.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}

// hostStamp is what etc/.paddock-template must contain for the skeleton
// to be current: the builder version and a digest of the host inputs
// (top-level layout, metadata of the copied /etc entries), so that for
// instance a package install that changes /etc/alternatives or
// /etc/ld.so.cache rebuilds it. Only a digest enters the sandbox.
func hostStamp(hostRoot string) (string, error) {
	fi, err := os.Stat(filepath.Join(hostRoot, "usr"))
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("host has no /usr directory: %v", err)
	}
	h := sha256.New()
	for _, p := range topLevelDirs {
		fi, err := os.Lstat(filepath.Join(hostRoot, p))
		switch {
		case err != nil:
			fmt.Fprintf(h, "%s none\n", p)
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(filepath.Join(hostRoot, p))
			fmt.Fprintf(h, "%s link %q\n", p, t)
		default:
			fmt.Fprintf(h, "%s %v\n", p, fi.Mode().Type())
		}
	}
	inputs := []string{"etc/ssl/certs/ca-certificates.crt", "usr/lib/os-release", "bin/bash", "usr/sbin/nologin"}
	for _, e := range hostEtcEntries(hostRoot) {
		inputs = append(inputs, "etc/"+e)
	}
	for _, p := range inputs {
		if fi, err := os.Lstat(filepath.Join(hostRoot, p)); err == nil {
			fmt.Fprintf(h, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		} else {
			fmt.Fprintf(h, "%s none\n", p)
		}
	}
	return fmt.Sprintf("paddock-host-template %d %x\n", hostBuilderVersion, h.Sum(nil)[:16]), nil
}

// hostOverlays lists the host directories layered over the skeleton: /usr,
// and each top-level directory the skeleton has as a real directory
// (the host was not merged-usr there when the skeleton was built).
func hostOverlays(rootfs, hostRoot string) []Overlay {
	ov := []Overlay{{Path: "/usr", Source: filepath.Join(hostRoot, "usr")}}
	for _, p := range topLevelDirs {
		if fi, err := os.Lstat(filepath.Join(rootfs, p)); err == nil && fi.IsDir() {
			ov = append(ov, Overlay{Path: "/" + p, Source: filepath.Join(hostRoot, p)})
		}
	}
	return ov
}

// buildHostRootfs writes the host skeleton into rootfs (which must not
// exist). All writes go through an os.Root, so nothing in the skeleton
// can redirect them outside it.
func buildHostRootfs(rootfs, hostRoot, stamp string, log *slog.Logger) error {
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return err
	}
	defer root.Close()

	if err := ensureMountDirs(root, true, log); err != nil {
		return err
	}
	for _, p := range topLevelDirs {
		hp := filepath.Join(hostRoot, p)
		fi, err := os.Lstat(hp)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(hp)
			if err != nil {
				return err
			}
			if err := root.Symlink(t, p); err != nil {
				return err
			}
		case fi.IsDir():
			// A mount point for its Overlay.
			if err := mkdirMode(root, p, 0o755); err != nil {
				return err
			}
		}
	}

	shell := "/bin/sh"
	if fi, err := os.Stat(filepath.Join(hostRoot, "bin/bash")); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		shell = "/bin/bash"
	}
	nologin := "/bin/false"
	if _, err := os.Stat(filepath.Join(hostRoot, "usr/sbin/nologin")); err == nil {
		nologin = "/usr/sbin/nologin"
	}
	files := []struct{ name, data string }{
		{"etc/passwd", hostPasswd(shell, nologin)},
		{"etc/group", hostGroup()},
		{"etc/hosts", etcHosts},
		{"etc/hostname", etcHostname},
		{"etc/resolv.conf", etcResolvConf},
		{"etc/nsswitch.conf", etcNsswitch},
	}
	for _, f := range files {
		if err := writeNew(root, f.name, []byte(f.data), 0o644); err != nil {
			return err
		}
	}
	if err := root.Symlink("../proc/self/mounts", "etc/mtab"); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(hostRoot, "usr/lib/os-release")); err == nil {
		if err := root.Symlink("../usr/lib/os-release", "etc/os-release"); err != nil {
			return err
		}
	}
	if err := mkdirMode(root, "etc/ssl", 0o755); err != nil {
		return err
	}
	if err := copyCABundle(root, filepath.Join(hostRoot, "etc/ssl/certs/ca-certificates.crt"), log); err != nil {
		return err
	}

	c := &copier{root: root, log: log}
	for _, e := range hostEtcEntries(hostRoot) {
		if err := c.copy(filepath.Join(hostRoot, "etc", e), "etc/"+e, 0); err != nil {
			return err
		}
	}
	return writeNew(root, stampPath, []byte(stamp), 0o644)
}

// copyCABundle copies the content of the host's CA bundle (following a
// symlink: distributions keep it elsewhere and link it here) and links
// etc/ssl/cert.pem to it. Public certificates only: etc/ssl/private is
// never read.
func copyCABundle(root *os.Root, src string, log *slog.Logger) error {
	f, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		log.Info("host template: CA bundle unreadable, skipped", "err", err)
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxCopyFile {
		log.Info("host template: CA bundle is not a regular file under the size limit, skipped")
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCopyFile+1))
	if err != nil || len(data) > maxCopyFile {
		log.Info("host template: CA bundle unreadable, skipped", "err", err)
		return nil
	}
	if err := mkdirMode(root, "etc/ssl/certs", 0o755); err != nil {
		return err
	}
	if err := writeNew(root, "etc/ssl/certs/ca-certificates.crt", data, 0o644); err != nil {
		return err
	}
	return root.Symlink("certs/ca-certificates.crt", "etc/ssl/cert.pem")
}

// copier copies allowlisted host entries into the skeleton within limits.
type copier struct {
	root    *os.Root
	log     *slog.Logger
	entries int
	bytes   int64
	full    bool // a limit was hit (logged once)
}

func (c *copier) skip(src, why string) {
	c.log.Info("host template: /etc entry skipped", "path", src, "reason", why)
}

func (c *copier) limit(src string) {
	if !c.full {
		c.log.Warn("host template: copy limit reached, further /etc entries skipped", "path", src,
			"max_entries", maxCopyEntries, "max_bytes", maxCopyTotal)
		c.full = true
	}
}

// copy copies src (host) to dst (skeleton-relative). Problems with the
// source skip it; only failures to write the skeleton are errors.
func (c *copier) copy(src, dst string, depth int) error {
	if deniedName(filepath.Base(src)) {
		c.skip(src, "denied name")
		return nil
	}
	fi, err := os.Lstat(src)
	if err != nil {
		c.skip(src, err.Error())
		return nil
	}
	if c.entries >= maxCopyEntries {
		c.limit(src)
		return nil
	}
	c.entries++
	if parent := path.Dir(dst); parent != "etc" {
		if _, err := c.root.Lstat(parent); errors.Is(err, fs.ErrNotExist) {
			if err := c.root.MkdirAll(parent, 0o755); err != nil {
				return err
			}
		}
	}
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		// Kept as a symlink: inside the sandbox it resolves in the
		// sandbox's root, never the host's.
		t, err := os.Readlink(src)
		if err != nil || len(t) > maxLinkTarget {
			c.skip(src, "unreadable symlink")
			return nil
		}
		return c.root.Symlink(t, dst)
	case m.IsRegular():
		if m.Perm()&0o004 == 0 {
			c.skip(src, "not world-readable")
			return nil
		}
		if fi.Size() > maxCopyFile {
			c.skip(src, "over the size limit")
			return nil
		}
		return c.copyFile(src, dst, m.Perm())
	case m.IsDir():
		if m.Perm()&0o005 != 0o005 {
			c.skip(src, "not world-readable")
			return nil
		}
		if depth >= maxCopyDepth {
			c.skip(src, "nested too deep")
			return nil
		}
		if err := c.root.Mkdir(dst, 0o700); err != nil {
			return err
		}
		names, err := readDirNames(src)
		if err != nil {
			c.skip(src, err.Error())
		}
		for _, n := range names {
			if err := c.copy(filepath.Join(src, n), dst+"/"+n, depth+1); err != nil {
				return err
			}
		}
		// setuid/setgid/sticky and group/other write are never carried.
		return c.root.Chmod(dst, m.Perm()&0o755)
	default:
		c.skip(src, "device, socket or FIFO")
		return nil
	}
}

func (c *copier) copyFile(src, dst string, perm fs.FileMode) error {
	in, err := openNoFollow(src)
	if err != nil {
		c.skip(src, err.Error())
		return nil
	}
	defer in.Close()
	// Re-check on the open file: the entry may have been swapped since
	// Lstat.
	st, err := in.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o004 == 0 || st.Size() > maxCopyFile {
		c.skip(src, "changed while copying")
		return nil
	}
	if c.bytes+st.Size() > maxCopyTotal {
		c.limit(src)
		return nil
	}
	out, err := c.root.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, maxCopyFile+1))
	if err == nil && n > maxCopyFile {
		err = errSkip
	}
	if err == nil {
		err = out.Chmod(perm & 0o755)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = c.root.Remove(dst)
		if errors.Is(err, errSkip) {
			c.skip(src, "grew over the size limit")
			return nil
		}
		// A read error is the source's problem; anything else is ours.
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == src {
			c.skip(src, err.Error())
			return nil
		}
		return err
	}
	c.bytes += n
	return nil
}

var errSkip = errors.New("skip")

func readDirNames(dir string) ([]string, error) {
	f, err := openNoFollow(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(maxCopyEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// ensureMountDirs creates the mountDirs in root. With force, modes and
// owners are set on existing directories too (the skeleton); otherwise
// only the sandbox-specific ones are (a built rootfs keeps its own).
func ensureMountDirs(root *os.Root, force bool, log *slog.Logger) error {
	for _, d := range mountDirs {
		fi, err := root.Lstat(d.path)
		exists := err == nil
		if exists && !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", d.path)
		}
		if !exists {
			if err := root.Mkdir(d.path, 0o700); err != nil {
				return err
			}
		}
		if exists && !force && d.path != "workspace" && d.path != "home/user" {
			continue
		}
		if err := root.Chmod(d.path, d.mode); err != nil {
			return err
		}
		if err := root.Lchown(d.path, d.uid, d.gid); err != nil {
			if os.Geteuid() == 0 {
				return err
			}
			log.Warn("template: cannot set owner (not root)", "path", d.path, "err", err)
		}
	}
	return nil
}

// mkdirMode creates dir in root with exactly mode (umask does not apply).
func mkdirMode(root *os.Root, dir string, mode fs.FileMode) error {
	if err := root.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return root.Chmod(dir, mode)
}

// writeNew creates name in root with data and exactly perm, replacing
// whatever entry was there: a symlink planted at name is removed, never
// written through.
func writeNew(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxStamp bounds the stamp file read back from a skeleton.
const maxStamp = 4096

// ensureHostLocked (re)builds DATA/templates/host unless its stamp matches
// the current builder and host inputs and it is ready.
func (r *Registry) ensureHostLocked() error {
	want, err := hostStamp(r.hostRoot)
	if err != nil {
		return err
	}
	if r.hostCurrent(want) {
		return nil
	}
	r.log.Info("building host template", "dir", filepath.Join(r.dir, HostName))
	staging, lockf, err := r.newStaging(HostName, true)
	if err != nil {
		return err
	}
	defer lockf.Close()
	installed := false
	defer func() {
		if !installed {
			if err := removeTree(staging); err != nil {
				r.log.Error("host template: cannot remove staging directory", "path", staging, "err", err)
			}
		}
	}()
	rootfs := filepath.Join(staging, rootfsDir)
	if err := buildHostRootfs(rootfs, r.hostRoot, want, r.log); err != nil {
		return err
	}
	size, err := durable.Usage(rootfs)
	if err != nil {
		return err
	}
	m := meta{
		Name:        HostName,
		Description: "the host's /usr with a minimal synthesized /etc (offline, instant)",
		CreatedAt:   time.Now().UTC().Truncate(time.Second),
		SizeBytes:   size,
		Builder:     fmt.Sprintf("host/%d", hostBuilderVersion),
	}
	if err := writeMeta(staging, m); err != nil {
		return err
	}
	if err := r.installLocked(staging, HostName); err != nil {
		return err
	}
	installed = true
	return nil
}

func (r *Registry) hostCurrent(want string) bool {
	if _, _, ok := r.ready(HostName); !ok {
		return false
	}
	f, err := openNoFollow(filepath.Join(r.dir, HostName, rootfsDir, stampPath))
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, maxStamp))
	return err == nil && string(got) == want
}
