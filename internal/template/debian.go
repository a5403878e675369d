package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// DefaultSuite is BuildDebian's default Debian release.
const DefaultSuite = "bookworm"

// basePackages are always installed into a Debian template.
var basePackages = []string{
	"bash", "coreutils", "python3", "ca-certificates", "procps",
	"findutils", "grep", "sed", "gzip", "tar", "less",
}

const (
	maxExtraPackages = 256
	maxPackageLen    = 128
	maxSuiteLen      = 64
	maxOutputLine    = 4096             // longer builder output lines are truncated
	outputTail       = 20               // builder lines kept for the error cause
	builderWaitDelay = 10 * time.Second // output drain bound after the builder exits
	maxSkelFile      = 1 << 20
)

// DebianOptions configure BuildDebian.
type DebianOptions struct {
	Name    string   // template name; default "debian" ("host" is reserved)
	Suite   string   // default "bookworm"
	Mirror  string   // default: what the host's apt uses, else http://deb.debian.org/debian
	Include []string // extra packages; bash coreutils python3 ca-certificates procps findutils grep sed gzip tar less are always in
}

// validSuite accepts Debian suite and codename spellings ("bookworm",
// "stable", "bookworm-backports"); the leading letter keeps it from being
// read as an mmdebstrap option.
func validSuite(s string) bool {
	if s == "" || len(s) > maxSuiteLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// validPackage accepts a Debian package name (policy 5.6.1: lower-case
// alphanumerics, '+', '-', '.', at least two characters, starting with an
// alphanumeric) with an optional ":arch" qualifier. Commas and white space
// would smuggle extra packages or options into --include.
func validPackage(s string) bool {
	name, arch, hasArch := strings.Cut(s, ":")
	if len(s) > maxPackageLen || len(name) < 2 || !isLowerAlnum(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isLowerAlnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	if hasArch {
		if arch == "" || !isLowerAlnum(arch[0]) {
			return false
		}
		for i := 0; i < len(arch); i++ {
			if c := arch[i]; !isLowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// normalize fills defaults and validates o; it returns the package list.
func (o *DebianOptions) normalize() ([]string, error) {
	if o.Name == "" {
		o.Name = DefaultDebianName
	}
	if !ValidName(o.Name) {
		return nil, errs.Invalid("invalid template name %s: use lower-case letters, digits, '.', '_' and '-', at most %d characters", quoteName(o.Name), MaxNameLen)
	}
	if o.Name == HostName {
		return nil, errs.Invalid("template name %q is reserved for the built-in host template", HostName)
	}
	if o.Suite == "" {
		o.Suite = DefaultSuite
	}
	if !validSuite(o.Suite) {
		return nil, errs.Invalid("invalid Debian suite %s", quoteName(o.Suite))
	}
	if o.Mirror != "" {
		if err := checkMirror(o.Mirror); err != nil {
			return nil, errs.Invalid("invalid mirror: %v", errMirror)
		}
	}
	if len(o.Include) > maxExtraPackages {
		return nil, errs.Invalid("too many packages: at most %d may be added", maxExtraPackages)
	}
	pkgs := append([]string(nil), basePackages...)
	seen := make(map[string]bool, len(pkgs)+len(o.Include))
	for _, p := range pkgs {
		seen[p] = true
	}
	for _, p := range o.Include {
		if !validPackage(p) {
			return nil, errs.Invalid("invalid package name %s", quoteName(p))
		}
		if !seen[p] {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}

// BuildDebian builds a Debian root filesystem with mmdebstrap into a staging
// directory, adds the sandbox users (root, user uid 1000), /workspace and a
// synthesized /etc/hosts, resolv.conf, then atomically renames it into place.
// Progress lines go to progress. A failure leaves no partial template behind.
func (r *Registry) BuildDebian(ctx context.Context, o DebianOptions, progress io.Writer) error {
	if err := supported(); err != nil {
		return err
	}
	pkgs, err := o.normalize()
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		// Only root mode gives the rootfs real ownership on disk.
		return errs.New(errs.CodeUnsupported, "building templates requires the server to run as root")
	}
	if !r.claim(o.Name) {
		return errs.New(errs.CodeConflict, "template %q is already being built", o.Name)
	}
	defer r.release(o.Name)

	if progress == nil {
		progress = io.Discard
	}
	out := &progressWriter{w: progress}
	out.step("resolving mirror...")
	mirror := o.Mirror
	if mirror == "" {
		mirror = detectMirror(r.aptDir)
	}
	out.step("mirror: %s", mirror)
	bin, err := exec.LookPath("mmdebstrap")
	if err != nil {
		return errs.Wrap(errs.CodeUnavailable, err, "mmdebstrap is not installed on the server (apt-get install mmdebstrap)")
	}

	staging, lockf, err := r.newStaging(o.Name, false)
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "template %q: cannot create a staging directory", o.Name)
	}
	defer lockf.Close()
	installed := false
	defer func() {
		if installed {
			return
		}
		if err := removeTree(staging); err != nil {
			r.log.Error("template build: cannot remove staging directory", "name", o.Name, "path", staging, "err", err)
		}
	}()
	rootfs := filepath.Join(staging, rootfsDir)
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "template %q: cannot create a staging directory", o.Name)
	}

	out.step("running mmdebstrap (%s, %d packages)...", o.Suite, len(pkgs))
	args := []string{
		"--mode=unshare", // as root: a private mount/PID namespace, real ownership
		"--variant=minbase",
		"--format=directory",
		"--include=" + strings.Join(pkgs, ","),
		o.Suite, rootfs, mirror,
	}
	// Host paths stay out of the progress stream.
	repl := strings.NewReplacer(rootfs, "$ROOTFS", staging, "$STAGING", r.dataDir, "$DATA")
	if err := r.runBuilder(ctx, o.Name, bin, args, out, repl); err != nil {
		return err
	}

	out.step("finalizing...")
	if err := finalizeDebian(rootfs, r.log); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "template %q: finalizing the root filesystem failed", o.Name)
	}
	size, err := durable.Usage(rootfs)
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "template %q: cannot measure the root filesystem", o.Name)
	}
	m := meta{
		Name:        o.Name,
		Description: fmt.Sprintf("Debian %s (minbase)", o.Suite),
		CreatedAt:   time.Now().UTC().Truncate(time.Second),
		SizeBytes:   size,
		Builder:     "mmdebstrap",
		Suite:       o.Suite,
		Mirror:      mirror,
		Packages:    pkgs,
	}
	if err := writeMeta(staging, m); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "template %q: cannot write its metadata", o.Name)
	}
	if err := ctx.Err(); err != nil {
		return cancelled(o.Name, err)
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	err = r.installLocked(staging, o.Name)
	unlock()
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "template %q: cannot install it", o.Name)
	}
	installed = true
	out.step("template %q ready (%s)", o.Name, humanBytes(size))
	return nil
}

func (r *Registry) claim(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.building[name] {
		return false
	}
	r.building[name] = true
	return true
}

func (r *Registry) release(name string) {
	r.mu.Lock()
	delete(r.building, name)
	r.mu.Unlock()
}

func cancelled(name string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.CodeTimeout, err, "building template %q timed out", name)
	}
	return errs.Wrap(errs.CodeUnavailable, err, "building template %q was cancelled", name)
}

// builderEnv is the builder's whole environment: the server's own (which
// may hold PADDOCK_ADMIN_KEY and other secrets) must not reach package
// maintainer scripts. Proxy settings are passed on, apt needs them.
func builderEnv() []string {
	env := []string{"LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", "HOME=/root"}
	p := os.Getenv("PATH")
	if p == "" {
		p = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	env = append(env, "PATH="+p)
	for _, k := range []string{"http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SOURCE_DATE_EPOCH"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// runBuilder runs the bootstrap command, streaming its output to out, and
// kills its whole process tree when ctx ends.
func (r *Registry) runBuilder(ctx context.Context, name, bin string, args []string, out *progressWriter, repl *strings.Replacer) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = builderEnv()
	cmd.Dir = "/"
	lw := &lineWriter{out: out, repl: repl}
	// The same comparable writer for both: exec copies with one goroutine.
	cmd.Stdout, cmd.Stderr = lw, lw
	cmd.SysProcAttr = builderProcAttr()
	cmd.Cancel = func() error { return killTree(cmd.Process) }
	cmd.WaitDelay = builderWaitDelay
	err := cmd.Run()
	lw.Flush()
	if cerr := ctx.Err(); cerr != nil {
		return cancelled(name, cerr)
	}
	if err != nil {
		cause := fmt.Errorf("%s: %w; last output:\n%s", filepath.Base(bin), err, strings.Join(lw.Tail(), "\n"))
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			return errs.Wrap(errs.CodeInternal, cause, "building template %q failed: mmdebstrap exited with status %d (see the build output)", name, ee.ExitCode())
		}
		return errs.Wrap(errs.CodeInternal, cause, "building template %q failed: mmdebstrap did not run to completion", name)
	}
	return nil
}

// progressWriter serialises step lines and builder lines onto one writer.
// Write errors are ignored: a vanished progress reader does not stop a
// build (cancelling ctx does).
type progressWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progressWriter) step(format string, args ...any) {
	p.line(fmt.Sprintf(format, args...))
}

func (p *progressWriter) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, s+"\n")
}

// lineWriter splits builder output into lines, prefixes them with "  | ",
// removes host paths and terminal control characters (escape sequences
// from a package's scripts must not drive the operator's terminal), and
// bounds line length.
type lineWriter struct {
	mu   sync.Mutex
	out  *progressWriter
	repl *strings.Replacer
	buf  []byte
	long bool // inside a line already emitted truncated
	tail []string
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			l.add(p)
			break
		}
		l.add(p[:i])
		l.end()
		p = p[i+1:]
	}
	return n, nil
}

// Flush emits a final unterminated line.
func (l *lineWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.end()
}

// Tail returns the last lines written.
func (l *lineWriter) Tail() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.tail...)
}

func (l *lineWriter) add(b []byte) {
	if l.long {
		return
	}
	if room := maxOutputLine - len(l.buf); len(b) > room {
		l.buf = append(l.buf, b[:room]...)
		l.emit(string(l.buf) + " [truncated]")
		l.buf, l.long = l.buf[:0], true
		return
	}
	l.buf = append(l.buf, b...)
}

func (l *lineWriter) end() {
	if !l.long && len(l.buf) > 0 {
		l.emit(string(l.buf))
	}
	l.buf, l.long = l.buf[:0], false
}

func (l *lineWriter) emit(s string) {
	if l.repl != nil {
		s = l.repl.Replace(s)
	}
	s = strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffd {
			return '?'
		}
		return r
	}, s)
	l.out.line("  | " + s)
	l.tail = append(l.tail, s)
	if len(l.tail) > outputTail {
		l.tail = l.tail[1:]
	}
}

func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n), "B"
	for _, s := range []string{"kB", "MB", "GB", "TB"} {
		v /= unit
		suffix = s
		if v < unit {
			break
		}
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

// finalizeDebian turns a bootstrapped rootfs into a template. Every path is
// resolved through an os.Root: the rootfs is package-controlled content,
// and a symlink such as etc/hosts -> /etc/shadow must not make a process
// running as host root write (or read) outside it.
func finalizeDebian(rootfs string, log *slog.Logger) error {
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return err
	}
	defer root.Close()

	if err := addUserToRootfs(root); err != nil {
		return err
	}
	for _, f := range []struct{ name, data string }{
		{"etc/hosts", etcHosts},
		{"etc/hostname", etcHostname},
		{"etc/resolv.conf", etcResolvConf},
	} {
		if err := writeNew(root, f.name, []byte(f.data), 0o644); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	// An empty machine-id means "not yet initialised": every sandbox made
	// from the template must not share one identity.
	if _, err := root.Lstat("etc/machine-id"); err == nil {
		if err := writeNew(root, "etc/machine-id", nil, 0o444); err != nil {
			return fmt.Errorf("etc/machine-id: %w", err)
		}
	}
	if err := root.Remove("var/lib/dbus/machine-id"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, c := range []struct {
		dir  string
		keep []string
	}{
		{"var/lib/apt/lists", []string{"partial", "lock"}},
		{"var/lib/apt/lists/partial", nil},
		{"var/cache/apt", []string{"archives"}},
		{"var/cache/apt/archives", []string{"partial", "lock"}},
		{"var/cache/apt/archives/partial", nil},
	} {
		if err := clearDir(root, c.dir, c.keep); err != nil {
			return err
		}
	}
	if err := ensureMountDirs(root, false, log); err != nil {
		return err
	}
	if err := populateHome(root); err != nil {
		return err
	}
	return removeDeviceNodes(root)
}

// addUserToRootfs adds the sandbox user to the rootfs's account databases.
func addUserToRootfs(root *os.Root) error {
	var in accountFiles
	var err error
	if in.passwd, err = readRegular(root, "etc/passwd", maxAccountDB); err != nil {
		return err
	}
	if in.group, err = readRegular(root, "etc/group", maxAccountDB); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{"etc/shadow", &in.shadow}, {"etc/gshadow", &in.gshadow}} {
		data, err := readRegular(root, f.name, maxAccountDB)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err == nil {
			*f.dst = data
			if data == nil {
				*f.dst = []byte{}
			}
		}
	}
	out, err := addSandboxUser(in, "/bin/bash")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name     string
		old, new []byte
	}{
		{"etc/passwd", in.passwd, out.passwd},
		{"etc/group", in.group, out.group},
		{"etc/shadow", in.shadow, out.shadow},
		{"etc/gshadow", in.gshadow, out.gshadow},
	} {
		if f.new != nil && !bytes.Equal(f.old, f.new) {
			if err := replaceFile(root, f.name, f.new); err != nil {
				return err
			}
		}
	}
	return nil
}

// readRegular reads a regular file (never through a final symlink, never
// a FIFO) of at most max bytes from root.
func readRegular(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|noFollowFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", name, max)
	}
	return data, nil
}

// replaceFile atomically replaces regular file name with data, keeping
// its mode and owner (shadow stays 0640 root:shadow).
func replaceFile(root *os.Root, name string, data []byte) error {
	fi, err := root.Lstat(name)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", name)
	}
	tmp := name + ".paddock-new"
	if err := writeNew(root, tmp, data, fi.Mode().Perm()); err != nil {
		return err
	}
	if uid, gid, ok := fileOwner(fi); ok {
		if err := root.Lchown(tmp, uid, gid); err != nil {
			_ = root.Remove(tmp)
			return err
		}
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// clearDir removes the entries of dir except those named in keep; a
// missing dir is fine.
func clearDir(root *os.Root, dir string, keep []string) error {
	fi, err := root.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	ents, err := fs.ReadDir(root.FS(), dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if contains(keep, e.Name()) {
			continue
		}
		if err := root.RemoveAll(path.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// populateHome gives a fresh home/user the dotfiles of etc/skel, as
// useradd -m would.
func populateHome(root *os.Root) error {
	home := strings.TrimPrefix(UserHome, "/")
	ents, err := fs.ReadDir(root.FS(), home)
	if err != nil || len(ents) > 0 {
		return err
	}
	skel, err := fs.ReadDir(root.FS(), "etc/skel")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range skel {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := readRegular(root, "etc/skel/"+e.Name(), maxSkelFile)
		if err != nil {
			continue
		}
		dst := home + "/" + e.Name()
		if err := writeNew(root, dst, data, 0o644); err != nil {
			return err
		}
		if err := root.Lchown(dst, UserUID, UserGID); err != nil {
			return err
		}
	}
	return nil
}

// removeDeviceNodes deletes block and character devices from the rootfs:
// the guest mounts its own /dev, and a device node in a lower layer is a
// raw handle on host hardware wherever the tree is ever used without
// nodev (an admin's chroot, another backend).
func removeDeviceNodes(root *os.Root) error {
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&(fs.ModeDevice|fs.ModeCharDevice) != 0 {
			return root.Remove(p)
		}
		return nil
	})
}
