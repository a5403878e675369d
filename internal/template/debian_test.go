//go:build linux

package template

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/paddockhq/paddock/internal/durable"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// fakeBuilder puts an executable "mmdebstrap" first on PATH. It records its
// arguments in the returned file, sets $target to the target directory
// (the second-to-last argument, as BuildDebian passes it) and runs body.
func fakeBuilder(t *testing.T, body string) (argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\nset -e\nprintf '%s\\n' \"$@\" > '" + argsFile + "'\neval target=\\${$(($# - 1))}\n" + body
	if err := os.WriteFile(filepath.Join(dir, "mmdebstrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return argsFile
}

// tinyRootfs is a fake bootstrap: a few files shaped like Debian's, with
// everything finalizeDebian must clean up.
func tinyRootfs(marker string) string {
	return `cd "$target"
mkdir -p etc/skel bin usr/bin tmp dev root home var/lib/dbus var/lib/apt/lists/partial var/cache/apt/archives/partial
chmod 1777 tmp
echo "I: fake bootstrap into $target"
printf 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n' > etc/passwd
printf 'root:x:0:\nshadow:x:42:\nusers:x:100:\n' > etc/group
printf 'root:*:19000:0:99999:7:::\n' > etc/shadow
chmod 640 etc/shadow
chgrp 42 etc/shadow
printf 'root:*::\n' > etc/gshadow
echo 0123456789abcdef0123456789abcdef > etc/machine-id
ln -s /etc/machine-id var/lib/dbus/machine-id
echo builder-host > etc/hostname
echo 'nameserver 10.1.2.3' > etc/resolv.conf
touch var/lib/apt/lists/deb.debian.org_InRelease var/lib/apt/lists/lock var/lib/apt/lists/partial/x
touch var/cache/apt/pkgcache.bin var/cache/apt/archives/foo.deb var/cache/apt/archives/lock var/cache/apt/archives/partial/y
echo 'alias ll="ls -l"' > etc/skel/.bashrc
mknod dev/null c 1 3
touch usr/bin/python3
echo '` + marker + `' > etc/marker
echo "I: done" >&2
`
}

type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	seen map[string]chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	for k, ch := range s.seen {
		if strings.Contains(s.b.String(), k) {
			close(ch)
			delete(s.seen, k)
		}
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// when returns a channel closed once text has been written.
func (s *syncBuffer) when(text string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(s.b.String(), text) {
		close(ch)
		return ch
	}
	if s.seen == nil {
		s.seen = map[string]chan struct{}{}
	}
	s.seen[text] = ch
	return ch
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

func TestBuildDebianFakeSuccess(t *testing.T) {
	r, data := openTest(t)
	argsFile := fakeBuilder(t, tinyRootfs("first"))
	var progress syncBuffer
	err := r.BuildDebian(context.Background(), DebianOptions{Mirror: "http://mirror.example/debian", Include: []string{"curl"}}, &progress)
	if err != nil {
		t.Fatalf("BuildDebian: %v\n%s", err, progress.String())
	}
	out := progress.String()
	for _, want := range []string{"resolving mirror...\n", "mirror: http://mirror.example/debian\n", "running mmdebstrap (bookworm, 12 packages)...\n",
		"  | I: fake bootstrap into $ROOTFS\n", "  | I: done\n", "finalizing...\n", `template "debian" ready`} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, data) {
		t.Errorf("progress leaks the data directory:\n%s", out)
	}
	args := strings.Split(strings.TrimSpace(mustRead(t, argsFile)), "\n")
	for _, want := range []string{"--mode=unshare", "--variant=minbase", "--format=directory",
		"--include=bash,coreutils,python3,ca-certificates,procps,findutils,grep,sed,gzip,tar,less,curl"} {
		if !slices.Contains(args, want) {
			t.Errorf("mmdebstrap args %q lack %q", args, want)
		}
	}
	if n := len(args); n < 3 || args[n-3] != "bookworm" || args[n-1] != "http://mirror.example/debian" ||
		!strings.HasPrefix(args[n-2], filepath.Join(data, "templates", ".build-debian-")) {
		t.Errorf("positional args: %q", args)
	}

	tpl, err := r.Get("debian")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(data, "templates", "debian", "rootfs")
	if tpl.Root != root || len(tpl.Overlays) != 0 || tpl.SizeBytes <= 0 || tpl.Description != "Debian bookworm (minbase)" {
		t.Errorf("template: %+v", tpl)
	}
	var m meta
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(data, "templates", "debian", metaFile))), &m); err != nil {
		t.Fatal(err)
	}
	if m.Suite != "bookworm" || m.Mirror != "http://mirror.example/debian" || !slices.Contains(m.Packages, "curl") || m.CreatedAt.IsZero() {
		t.Errorf("template.json: %+v", m)
	}
	checkFinalized(t, root)
	if got := mustRead(t, filepath.Join(root, "etc/machine-id")); got != "" {
		t.Errorf("machine-id = %q, want emptied", got)
	}
	if got := mustRead(t, filepath.Join(root, "etc/marker")); got != "first\n" {
		t.Errorf("marker = %q", got)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Errorf("leftovers: %v", l)
	}

	// Rebuilding replaces the template in one swap and removes the old one.
	fakeBuilder(t, tinyRootfs("second"))
	if err := r.BuildDebian(context.Background(), DebianOptions{Mirror: "http://mirror.example/debian"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(root, "etc/marker")); got != "second\n" {
		t.Errorf("marker after rebuild = %q", got)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Errorf("leftovers after rebuild: %v", l)
	}
	infos, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Name != "debian" || !infos[0].Ready || infos[1].Name != "host" {
		t.Errorf("List = %+v", infos)
	}
}

// checkFinalized asserts what finalizeDebian guarantees of a rootfs.
func checkFinalized(t *testing.T, root string) {
	t.Helper()
	passwd := mustRead(t, filepath.Join(root, "etc/passwd"))
	if !strings.Contains(passwd, "\nuser:x:1000:1000::/home/user:/bin/bash\n") || !strings.HasPrefix(passwd, "root:x:0:0:") {
		t.Errorf("passwd:\n%s", passwd)
	}
	if !strings.Contains(mustRead(t, filepath.Join(root, "etc/group")), "\nuser:x:1000:\n") {
		t.Error("group lacks user")
	}
	if !strings.Contains(mustRead(t, filepath.Join(root, "etc/shadow")), "\nuser:!:") {
		t.Error("shadow lacks a locked user entry")
	}
	if fi, err := os.Stat(filepath.Join(root, "etc/shadow")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("shadow mode changed: %v %v", fi.Mode(), err)
	} else if _, gid, _ := fileOwner(fi); gid != 42 {
		t.Errorf("shadow group changed to %d", gid)
	}
	for name, want := range map[string]string{"etc/hosts": etcHosts, "etc/hostname": etcHostname, "etc/resolv.conf": etcResolvConf} {
		if got := mustRead(t, filepath.Join(root, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// minbase has no machine-id at all; where one exists it is emptied.
	if b, err := os.ReadFile(filepath.Join(root, "etc/machine-id")); err == nil && len(b) > 0 {
		t.Errorf("machine-id = %q, want empty or absent", b)
	}
	if _, err := os.Lstat(filepath.Join(root, "var/lib/dbus/machine-id")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("var/lib/dbus/machine-id kept: %v", err)
	}
	for dir, allowed := range map[string][]string{
		"var/lib/apt/lists":              {"lock", "partial"},
		"var/lib/apt/lists/partial":      nil,
		"var/cache/apt":                  {"archives"},
		"var/cache/apt/archives":         {"lock", "partial"},
		"var/cache/apt/archives/partial": nil,
	} {
		for _, e := range entries(t, filepath.Join(root, dir)) {
			if !slices.Contains(allowed, e) {
				t.Errorf("%s/%s kept", dir, e)
			}
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&(fs.ModeDevice|fs.ModeCharDevice) != 0 {
			t.Errorf("device node %s kept", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range mountDirs {
		if fi, err := os.Lstat(filepath.Join(root, d.path)); err != nil || !fi.IsDir() {
			t.Errorf("mount point %s missing: %v", d.path, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "workspace")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("workspace: %v %v", fi, err)
	}
	for _, p := range []string{"home/user", "home/user/.bashrc"} {
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if uid, gid, _ := fileOwner(fi); uid != UserUID || gid != UserGID {
			t.Errorf("%s owned by %d:%d", p, uid, gid)
		}
	}
}

func TestBuildDebianFakeFailureKeepsPrevious(t *testing.T) {
	r, data := openTest(t)

	// No template yet: a failed build registers nothing.
	fakeBuilder(t, `echo "I: pretending to bootstrap $target"
mkdir -p "$target/etc"
echo partial > "$target/etc/passwd"
echo "E: cannot reach the mirror" >&2
exit 1
`)
	var progress syncBuffer
	err := r.BuildDebian(context.Background(), DebianOptions{}, &progress)
	if errs.CodeOf(err) != errs.CodeInternal {
		t.Fatalf("code = %v (%v)", errs.CodeOf(err), err)
	}
	msg := errs.Public(err)
	if !strings.Contains(msg, "status 1") || strings.Contains(msg, "/") {
		t.Errorf("public message %q: want the exit status and no path", msg)
	}
	if !strings.Contains(err.Error(), "E: cannot reach the mirror") {
		t.Errorf("cause lacks the builder's last output: %v", err)
	}
	if out := progress.String(); !strings.Contains(out, "  | E: cannot reach the mirror\n") || !strings.Contains(out, "  | I: pretending to bootstrap $ROOTFS\n") {
		t.Errorf("progress:\n%s", out)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Errorf("staging left behind: %v", l)
	}
	if _, err := r.Get("debian"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("Get after failure = %v", err)
	}
	if infos, _ := r.List(); len(infos) != 1 || infos[0].Name != HostName {
		t.Errorf("List after failure = %+v", infos)
	}

	// With a template in place, a failed rebuild leaves it untouched.
	fakeBuilder(t, tinyRootfs("good"))
	if err := r.BuildDebian(context.Background(), DebianOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	fakeBuilder(t, "echo broken; exit 3\n")
	if err := r.BuildDebian(context.Background(), DebianOptions{}, nil); err == nil || !strings.Contains(errs.Public(err), "status 3") {
		t.Fatalf("second build: %v", err)
	}
	tpl, err := r.Get("debian")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(tpl.Root, "etc/marker")); got != "good\n" {
		t.Errorf("previous template damaged: marker %q", got)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Errorf("staging left behind: %v", l)
	}
}

// processesWith lists live processes whose command line contains s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func TestBuildDebianCancelKillsBuilder(t *testing.T) {
	r, data := openTest(t)
	marker := "paddock-cancel-" + durable.RandHex()
	fakeBuilder(t, `mkdir -p "$target/etc"
cat > "$target/child.sh" <<'EOS'
trap "" TERM HUP INT
echo "I: child $1 ready"
sleep 1000
EOS
sh "$target/child.sh" 1 `+marker+` &
setsid sh "$target/child.sh" 2 `+marker+` &
wait
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progress syncBuffer
	started1, started2 := progress.when("I: child 1 ready"), progress.when("I: child 2 ready")
	done := make(chan error, 1)
	go func() { done <- r.BuildDebian(ctx, DebianOptions{Name: "slow"}, &progress) }()
	for _, started := range []<-chan struct{}{started1, started2} {
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("build ended early: %v\n%s", err, progress.String())
		}
	}
	// Positive control: the builder's descendants are alive now.
	if p := processesWith(t, marker); len(p) < 2 {
		t.Fatalf("positive control: want the 2 builder children running, found %v", p)
	}
	// A second build of the same name is refused while the first runs.
	if err := r.BuildDebian(context.Background(), DebianOptions{Name: "slow"}, nil); errs.CodeOf(err) != errs.CodeConflict {
		t.Errorf("concurrent build of the same name: %v", err)
	}
	cancel()
	err := <-done
	if errs.CodeOf(err) != errs.CodeUnavailable || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled build = %v (code %v)", err, errs.CodeOf(err))
	}
	// The whole tree is gone, including the child that ignored signals and
	// left the process group (the PID namespace took it down).
	if p := processesWith(t, marker); len(p) > 0 {
		t.Errorf("builder processes survived the cancel: %v", p)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Errorf("staging left behind: %v", l)
	}
	if _, err := r.Get("slow"); errs.CodeOf(err) != errs.CodeNotFound {
		t.Errorf("Get(slow) = %v", err)
	}
}

// TestBuildDebianSymlinkEscape: a bootstrap (package content) that plants
// symlinks out of the rootfs must not make finalizing, which runs as host
// root, write host files.
func TestBuildDebianSymlinkEscape(t *testing.T) {
	r, data := openTest(t)
	victimAbs := filepath.Join(data, "victim-abs")
	victimRel := filepath.Join(data, "victim-rel")
	const original = "host file, must not change\n"
	for _, v := range []string{victimAbs, victimRel} {
		mustWrite(t, v, original, 0o644)
	}

	// Positive control: writing through such symlinks natively does hit
	// the victim.
	scratch := t.TempDir()
	mustWrite(t, filepath.Join(scratch, "control-victim"), original, 0o644)
	if err := os.Symlink(filepath.Join(scratch, "control-victim"), filepath.Join(scratch, "hosts")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scratch, "hosts"), []byte(etcHosts), 0o644); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, filepath.Join(scratch, "control-victim")) == original {
		t.Fatal("positive control: writing through the symlink did not reach its target")
	}

	// etc is DATA/templates/.build-<name>-<rand>/rootfs/etc: four levels
	// up is DATA.
	fakeBuilder(t, tinyRootfs("x")+`cd "$target/etc"
rm -f hosts resolv.conf hostname
ln -s '`+victimAbs+`' hosts
ln -s ../../../../victim-rel resolv.conf
ln -s '`+victimAbs+`' hostname
ln -s '`+victimAbs+`' machine-id.tmp
`)
	if err := r.BuildDebian(context.Background(), DebianOptions{}, nil); err != nil {
		t.Fatalf("BuildDebian: %v", err)
	}
	for _, v := range []string{victimAbs, victimRel} {
		if got := mustRead(t, v); got != original {
			t.Errorf("%s was written: %q", filepath.Base(v), got)
		}
	}
	root := filepath.Join(data, "templates", "debian", "rootfs")
	for _, f := range []string{"etc/hosts", "etc/resolv.conf", "etc/hostname"} {
		if fi, err := os.Lstat(filepath.Join(root, f)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a regular file now: %v %v", f, fi, err)
		}
	}

	// An account database that is a symlink out of the rootfs is refused
	// (read-modify-write would append our user to the host file).
	mustWrite(t, victimAbs, "root:x:0:0:root:/root:/bin/bash\n", 0o644)
	fakeBuilder(t, tinyRootfs("x")+`cd "$target/etc"
rm -f passwd
ln -s '`+victimAbs+`' passwd
`)
	if err := r.BuildDebian(context.Background(), DebianOptions{Name: "evil"}, nil); err == nil {
		t.Error("a rootfs whose etc/passwd escapes it was accepted")
	}
	if got := mustRead(t, victimAbs); got != "root:x:0:0:root:/root:/bin/bash\n" {
		t.Errorf("host passwd-like victim modified: %q", got)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Errorf("staging left behind: %v", l)
	}
}

func TestBuildDebianRejectsBadOptions(t *testing.T) {
	r, data := openTest(t)
	argsFile := fakeBuilder(t, tinyRootfs("x"))
	for _, o := range []DebianOptions{
		{Name: "Debian"}, {Name: "../x"}, {Name: "host"}, {Suite: "--mode=root"}, {Suite: "Bookworm"},
		{Mirror: "ftp://ftp.debian.org/debian"}, {Mirror: "http://user:pw@m/debian"}, {Mirror: "--aptopt=x"},
		{Include: []string{"-oAPT::Get::AllowUnauthenticated=1"}}, {Include: []string{"vim,evil"}},
		{Include: make([]string, maxExtraPackages+1)},
	} {
		err := r.BuildDebian(context.Background(), o, nil)
		if errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("%+v: %v, want invalid", o, err)
		}
		if msg := errs.Public(err); len(msg) > 300 {
			t.Errorf("%+v: message of %d bytes", o, len(msg))
		}
	}
	if _, err := os.Stat(argsFile); !errors.Is(err, fs.ErrNotExist) {
		t.Error("mmdebstrap ran for invalid options")
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Errorf("leftovers: %v", l)
	}

	t.Setenv("PATH", t.TempDir())
	err := r.BuildDebian(context.Background(), DebianOptions{}, nil)
	if errs.CodeOf(err) != errs.CodeUnavailable || !strings.Contains(errs.Public(err), "mmdebstrap is not installed") {
		t.Errorf("without mmdebstrap: %v", err)
	}
}

// TestBuildDebianReal bootstraps a real Debian template from the network.
// It takes about a minute: run with PADDOCK_TEST_DEBIAN=1.
func TestBuildDebianReal(t *testing.T) {
	if os.Getenv("PADDOCK_TEST_DEBIAN") != "1" {
		t.Skip("set PADDOCK_TEST_DEBIAN=1 to bootstrap Debian from the mirror (about a minute)")
	}
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		t.Skip("mmdebstrap not installed (apt-get install mmdebstrap)")
	}
	r, data := openTest(t)
	var progress syncBuffer
	start := time.Now()
	err := r.BuildDebian(context.Background(), DebianOptions{}, &progress)
	t.Logf("build took %v", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("BuildDebian: %v\n%s", err, progress.String())
	}
	tpl, err := r.Get("debian")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("size %s", humanBytes(tpl.SizeBytes))
	pl := strings.Split(strings.TrimSpace(progress.String()), "\n")
	t.Logf("%d progress lines; first and last:\n%s\n...\n%s", len(pl), strings.Join(pl[:min(6, len(pl))], "\n"), strings.Join(pl[max(0, len(pl)-6):], "\n"))
	root := tpl.Root
	passwd := mustRead(t, filepath.Join(root, "etc/passwd"))
	if !strings.Contains(passwd, "\nuser:x:1000:1000::/home/user:/bin/bash\n") {
		t.Errorf("passwd lacks user 1000:\n%s", passwd)
	}
	if fi, err := os.Stat(filepath.Join(root, "workspace")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("workspace: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "usr/bin/python3")); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("python3: %v %v", fi, err)
	}
	checkFinalized(t, root)
	out, err := exec.Command("chroot", root, "/usr/bin/python3", "-c", "import ssl, pwd; print(pwd.getpwuid(1000).pw_name)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "user" {
		t.Errorf("python3 in the rootfs: %v %q", err, out)
	}
	if strings.Contains(progress.String(), data) {
		t.Error("progress leaks the data directory")
	}
}
