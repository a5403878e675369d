//go:build linux

package template

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockhq/paddock/internal/errs"
)

func TestHostTemplateStructure(t *testing.T) {
	r, data := openTest(t)
	tpl, err := r.Get(HostName)
	if err != nil {
		t.Fatalf("Get(host): %v", err)
	}
	root := filepath.Join(data, "templates", "host", "rootfs")
	if tpl.Root != root {
		t.Fatalf("Root = %q, want %q", tpl.Root, root)
	}
	if tpl.Description == "" || tpl.CreatedAt.IsZero() || tpl.SizeBytes <= 0 {
		t.Errorf("metadata not filled: %+v", tpl)
	}

	// Top-level directories mirror the host: symlink for symlink, overlay
	// for a real directory.
	wantOverlays := []Overlay{{Path: "/usr", Source: "/usr"}}
	for _, p := range topLevelDirs {
		hfi, herr := os.Lstat("/" + p)
		sfi, serr := os.Lstat(filepath.Join(root, p))
		switch {
		case herr != nil:
			if serr == nil {
				t.Errorf("/%s absent on the host but present in the skeleton", p)
			}
		case hfi.Mode()&fs.ModeSymlink != 0:
			ht, _ := os.Readlink("/" + p)
			st, err := os.Readlink(filepath.Join(root, p))
			if err != nil || st != ht {
				t.Errorf("/%s: skeleton link %q (%v), host link %q", p, st, err, ht)
			}
		default:
			if serr != nil || !sfi.IsDir() {
				t.Errorf("/%s: host directory, skeleton has %v (%v)", p, sfi, serr)
			}
			wantOverlays = append(wantOverlays, Overlay{Path: "/" + p, Source: "/" + p})
		}
	}
	if diff := cmp.Diff(wantOverlays, tpl.Overlays); diff != "" {
		t.Errorf("Overlays (-want +got):\n%s", diff)
	}
	if ents, err := os.ReadDir(filepath.Join(root, "usr")); err != nil || len(ents) != 0 {
		t.Errorf("usr must be an empty mount point: %v %v", ents, err)
	}

	for _, d := range mountDirs {
		fi, err := os.Lstat(filepath.Join(root, d.path))
		if err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d.path, err)
			continue
		}
		if got := fi.Mode() & (fs.ModePerm | fs.ModeSticky); got != d.mode {
			t.Errorf("%s mode = %v, want %v", d.path, got, d.mode)
		}
		if uid, gid, _ := fileOwner(fi); uid != d.uid || gid != d.gid {
			t.Errorf("%s owner = %d:%d, want %d:%d", d.path, uid, gid, d.uid, d.gid)
		}
	}

	etc := filepath.Join(root, "etc")
	if got := passwdNames(mustRead(t, filepath.Join(etc, "passwd"))); !slices.Equal(got, []string{"root", "user", "nobody"}) {
		t.Errorf("passwd accounts = %v, want exactly root, user, nobody", got)
	}
	passwd := mustRead(t, filepath.Join(etc, "passwd"))
	if !strings.Contains(passwd, "root:x:0:0:root:/root:/bin/bash\n") || !strings.Contains(passwd, "user:x:1000:1000::/home/user:/bin/bash\n") {
		t.Errorf("passwd (host has bash):\n%s", passwd)
	}
	group := mustRead(t, filepath.Join(etc, "group"))
	for _, g := range []string{"root:x:0:", "tty:x:5:", "users:x:100:", "user:x:1000:", "nogroup:x:65534:"} {
		if !strings.Contains(group, g+"\n") {
			t.Errorf("group lacks %q:\n%s", g, group)
		}
	}
	if got := mustRead(t, filepath.Join(etc, "hostname")); got != "sandbox\n" {
		t.Errorf("hostname = %q", got)
	}
	hosts := mustRead(t, filepath.Join(etc, "hosts"))
	if !strings.Contains(hosts, "127.0.0.1\tlocalhost") || !strings.Contains(hosts, "::1\tlocalhost") {
		t.Errorf("hosts lacks v4/v6 localhost:\n%s", hosts)
	}
	if got := mustRead(t, filepath.Join(etc, "resolv.conf")); !strings.HasPrefix(got, "#") || strings.Contains(got, "nameserver") {
		t.Errorf("resolv.conf = %q, want a comment only", got)
	}
	if got := mustRead(t, filepath.Join(etc, "nsswitch.conf")); !strings.Contains(got, "hosts:     files dns") {
		t.Errorf("nsswitch.conf = %q", got)
	}
	if host, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		if got := mustRead(t, filepath.Join(etc, "ssl/certs/ca-certificates.crt")); got != string(host) {
			t.Error("CA bundle content differs from the host's")
		}
		if l, err := os.Readlink(filepath.Join(etc, "ssl/cert.pem")); err != nil || l != "certs/ca-certificates.crt" {
			t.Errorf("ssl/cert.pem link = %q, %v", l, err)
		}
	}
	if _, err := os.Stat("/usr/lib/os-release"); err == nil {
		if l, err := os.Readlink(filepath.Join(etc, "os-release")); err != nil || l != "../usr/lib/os-release" {
			t.Errorf("os-release link = %q, %v", l, err)
		}
	}
	stamp, err := hostStamp("/")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(etc, ".paddock-template")); got != stamp || !strings.HasPrefix(got, "paddock-host-template 1 ") {
		t.Errorf("stamp = %q, want %q", got, stamp)
	}

	// /etc holds only synthesized files and allowlisted host entries.
	allowed := map[string]bool{
		"passwd": true, "group": true, "hosts": true, "hostname": true, "resolv.conf": true,
		"nsswitch.conf": true, "mtab": true, "os-release": true, "ssl": true, ".paddock-template": true,
	}
	for _, e := range etcAllowlist {
		allowed[strings.Split(e, "/")[0]] = true
	}
	ents, err := os.ReadDir(etc)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if ok, _ := path.Match(etcAllowGlob, e.Name()); !allowed[e.Name()] && !ok {
			t.Errorf("etc/%s is neither synthesized nor allowlisted", e.Name())
		}
	}
	sslEnts, _ := os.ReadDir(filepath.Join(etc, "ssl"))
	for _, e := range sslEnts {
		if !slices.Contains([]string{"openssl.cnf", "certs", "cert.pem"}, e.Name()) {
			t.Errorf("etc/ssl/%s is not expected", e.Name())
		}
	}
	// Debian's alternatives are there (vi, awk, editor resolve through it).
	if _, err := os.Lstat("/etc/alternatives/awk"); err == nil {
		if _, err := os.Lstat(filepath.Join(etc, "alternatives/awk")); err != nil {
			t.Errorf("alternatives/awk not copied: %v", err)
		}
	}
}

// TestHostNoForbiddenFiles walks the whole skeleton for names and contents
// that must never leave the host.
func TestHostNoForbiddenFiles(t *testing.T) {
	_, data := openTest(t)
	root := filepath.Join(data, "templates", "host", "rootfs")

	// Positive control: the host has the secrets we look for, so not
	// finding them in the skeleton means something.
	var secrets [][]byte
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/machine-id", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_rsa_key", "/etc/ssl/private/ssl-cert-snakeoil.key"} {
		if b, err := os.ReadFile(p); err == nil && len(bytes.TrimSpace(b)) > 0 {
			secrets = append(secrets, b)
		}
	}
	if len(secrets) == 0 {
		t.Fatal("positive control: the host has no /etc/shadow or similar to look for")
	}
	hostPasswd := mustRead(t, "/etc/passwd")
	if len(passwdNames(hostPasswd)) <= 3 {
		t.Fatal("positive control: the host's passwd is indistinguishable from ours")
	}

	forbidden := []string{"shadow", "shadow-", "gshadow", "gshadow-", "passwd-", "group-", "sudoers", "sudoers.d",
		"ssh", "machine-id", "subuid", "subgid", "private", "krb5.conf", "krb5.keytab", "adjtime", "fstab", "crontab"}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		name := d.Name()
		if slices.Contains(forbidden, name) || strings.HasSuffix(name, ".key") || strings.Contains(strings.ToLower(name), "credential") {
			t.Errorf("forbidden entry %s", rel)
		}
		if (name == "passwd" || name == "group" || name == "hostname") && rel != "etc/"+name {
			t.Errorf("unexpected account/identity file %s", rel)
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, s := range secrets {
				if bytes.Equal(b, s) {
					t.Errorf("%s has the content of a host secret", rel)
				}
			}
			if string(b) == hostPasswd {
				t.Errorf("%s is the host's passwd", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "home")); len(ents) != 1 || ents[0].Name() != "user" {
		t.Errorf("home must hold only user/: %v", ents)
	}
	for _, d := range []string{"root", "tmp", "var/tmp", "run", "workspace", "home/user"} {
		if ents, _ := os.ReadDir(filepath.Join(root, d)); len(ents) != 0 {
			t.Errorf("%s must be empty, has %v", d, ents)
		}
	}
}

// fakeHost builds a host root that is not merged-usr and whose /etc holds
// every kind of entry the allowlist copier must refuse.
func fakeHost(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/lib", "bin"} {
		if err := os.MkdirAll(filepath.Join(h, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("usr/lib", filepath.Join(h, "lib")); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(h, "etc")
	mustWrite(t, filepath.Join(etc, "passwd"), "root:x:0:0::/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/sh\n", 0o644)
	mustWrite(t, filepath.Join(etc, "shadow"), "alice:$6$secret:1::::::\n", 0o640)
	mustWrite(t, filepath.Join(etc, "gshadow"), "alice:!::\n", 0o640)
	mustWrite(t, filepath.Join(etc, "sudoers"), "alice ALL=(ALL) NOPASSWD: ALL\n", 0o440)
	mustWrite(t, filepath.Join(etc, "ssh/ssh_host_ed25519_key"), "PRIVATE KEY\n", 0o600)
	mustWrite(t, filepath.Join(etc, "machine-id"), "0123456789abcdef0123456789abcdef\n", 0o444)
	mustWrite(t, filepath.Join(etc, "hostname"), "prod-db-7\n", 0o644)
	mustWrite(t, filepath.Join(etc, "notlisted.conf"), "x\n", 0o644)
	mustWrite(t, filepath.Join(etc, "ssl/openssl.cnf"), "[openssl]\n", 0o644)
	mustWrite(t, filepath.Join(etc, "ssl/private/ssl-cert-snakeoil.key"), "PRIVATE KEY\n", 0o600)
	mustWrite(t, filepath.Join(etc, "ssl/certs/ca-certificates.crt"), "CERTS\n", 0o644)
	mustWrite(t, filepath.Join(etc, "python3.11/sitecustomize.py"), "# py\n", 0o644)
	mustWrite(t, filepath.Join(etc, "profile"), "# profile\n", 0o644)
	pd := filepath.Join(etc, "profile.d")
	mustWrite(t, filepath.Join(pd, "ok.sh"), "# ok\n", 0o644)
	mustWrite(t, filepath.Join(pd, "sub/nested.sh"), "# nested\n", 0o644)
	mustWrite(t, filepath.Join(pd, "suid.sh"), "# suid\n", 0o644)
	if err := os.Chmod(filepath.Join(pd, "suid.sh"), 0o4777); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(pd, "api.key"), "KEY\n", 0o644)
	mustWrite(t, filepath.Join(pd, "aws-credentials"), "KEY\n", 0o644)
	mustWrite(t, filepath.Join(pd, "private.sh"), "# 0600\n", 0o600)
	mustWrite(t, filepath.Join(pd, "hidden/inside.sh"), "# in a 0700 dir\n", 0o644)
	if err := os.Chmod(filepath.Join(pd, "hidden"), 0o700); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(pd, "big.sh"), strings.Repeat("#", maxCopyFile+1), 0o644)
	if err := os.Symlink("/etc/shadow", filepath.Join(pd, "link.sh")); err != nil {
		t.Fatal(err)
	}
	// Special files: their creation succeeding is the positive control.
	if err := syscall.Mkfifo(filepath.Join(pd, "fifo.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(pd, "null.sh"), syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(pd, "sock.sh"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return h
}

func TestHostFakeRootCopiesOnlyAllowed(t *testing.T) {
	requireRoot(t)
	h := fakeHost(t)
	data := t.TempDir()
	r, err := open(data, h, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := r.Get(HostName)
	if err != nil {
		t.Fatal(err)
	}
	want := []Overlay{{Path: "/usr", Source: filepath.Join(h, "usr")}, {Path: "/bin", Source: filepath.Join(h, "bin")}}
	if diff := cmp.Diff(want, tpl.Overlays); diff != "" {
		t.Errorf("Overlays (-want +got):\n%s", diff)
	}
	root := tpl.Root
	if fi, err := os.Lstat(filepath.Join(root, "bin")); err != nil || !fi.IsDir() {
		t.Errorf("bin must be a mount-point directory: %v", err)
	}
	if l, err := os.Readlink(filepath.Join(root, "lib")); err != nil || l != "usr/lib" {
		t.Errorf("lib link = %q, %v", l, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "sbin")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("sbin absent on the host must be absent: %v", err)
	}
	if got := mustRead(t, filepath.Join(root, "etc/passwd")); !strings.Contains(got, "root:x:0:0:root:/root:/bin/sh\n") || strings.Contains(got, "alice") {
		t.Errorf("passwd (no bash on this host):\n%s", got)
	}
	if got := mustRead(t, filepath.Join(root, "etc/hostname")); got != "sandbox\n" {
		t.Errorf("hostname = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/os-release")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("os-release without usr/lib/os-release: %v", err)
	}

	present := []string{"etc/profile", "etc/profile.d/ok.sh", "etc/profile.d/sub/nested.sh", "etc/profile.d/suid.sh",
		"etc/python3.11/sitecustomize.py", "etc/ssl/openssl.cnf", "etc/ssl/certs/ca-certificates.crt"}
	for _, p := range present {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s should be copied: %v", p, err)
		}
	}
	absent := []string{"etc/shadow", "etc/gshadow", "etc/sudoers", "etc/ssh", "etc/machine-id", "etc/notlisted.conf",
		"etc/ssl/private", "etc/profile.d/api.key", "etc/profile.d/aws-credentials", "etc/profile.d/private.sh",
		"etc/profile.d/hidden", "etc/profile.d/big.sh", "etc/profile.d/fifo.sh", "etc/profile.d/null.sh", "etc/profile.d/sock.sh"}
	for _, p := range absent {
		if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s must not be copied (err %v)", p, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(root, "etc/profile.d/suid.sh")); err == nil && fi.Mode() != 0o755 {
		t.Errorf("suid.sh mode = %v, want 0755 (no setuid, no world write)", fi.Mode())
	}
	// A symlink stays a symlink: its target resolves inside the sandbox,
	// where there is no shadow.
	if l, err := os.Readlink(filepath.Join(root, "etc/profile.d/link.sh")); err != nil || l != "/etc/shadow" {
		t.Errorf("link.sh = %q, %v", l, err)
	}
	if got := mustRead(t, filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")); got != "CERTS\n" {
		t.Errorf("CA bundle = %q", got)
	}
}

func TestHostRebuild(t *testing.T) {
	requireRoot(t)
	h := fakeHost(t)
	data := t.TempDir()
	reopen := func() {
		t.Helper()
		if _, err := open(data, h, testLogger(t)); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(data, "templates", "host", "rootfs")
	marker := filepath.Join(root, "etc", "zz-marker")
	stampFile := filepath.Join(root, stampPath)
	reopen()
	stamp := mustRead(t, stampFile)

	mustWrite(t, marker, "x", 0o644)
	reopen()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("an up-to-date skeleton was rebuilt: %v", err)
	}

	steps := []struct {
		name   string
		change func()
	}{
		{"stamp from another builder version", func() { mustWrite(t, stampFile, "paddock-host-template 0 old\n", 0o644) }},
		{"stamp missing", func() { os.Remove(stampFile) }},
		{"template.json missing", func() { os.Remove(filepath.Join(data, "templates", "host", metaFile)) }},
		{"host input changed", func() { mustWrite(t, filepath.Join(h, "etc", "profile"), "# changed profile\n", 0o644) }},
	}
	for _, s := range steps {
		mustWrite(t, marker, "x", 0o644)
		s.change()
		reopen()
		if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: not rebuilt", s.name)
		}
		got := mustRead(t, stampFile)
		if s.name != "host input changed" && got != stamp {
			t.Errorf("%s: stamp after rebuild %q, want %q", s.name, got, stamp)
		}
		if l := leftovers(t, data); len(l) > 0 {
			t.Errorf("%s: leftovers %v", s.name, l)
		}
	}
	if got := mustRead(t, filepath.Join(root, "etc/profile")); got != "# changed profile\n" {
		t.Errorf("rebuilt skeleton has stale profile %q", got)
	}
}

// TestHostSkeletonUsable runs programs from the host's /usr in the skeleton
// the way a sandbox sees it (skeleton root, /usr layered in).
func TestHostSkeletonUsable(t *testing.T) {
	r, _ := openTest(t)
	tpl, err := r.Get(HostName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare(1) not installed")
	}
	var binds strings.Builder
	for _, o := range tpl.Overlays {
		binds.WriteString("mount --rbind -o ro " + o.Source + " " + filepath.Join(tpl.Root, o.Path) + " && ")
	}
	script := "mount --make-rprivate / && " + binds.String() + "exec chroot " + tpl.Root +
		` /bin/sh -c 'id -un 1000; getent hosts localhost | head -n1; cat /etc/hostname; python3 -c "import ssl; print(ssl.create_default_context().cert_store_stats()[\"x509_ca\"] > 0)"'`
	out, err := exec.Command("unshare", "-m", "sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	if len(got) < 4 || got[0] != "user" || got[1] != "::1" && got[1] != "127.0.0.1" || !slices.Contains(got, "sandbox") || got[len(got)-1] != "True" {
		t.Errorf("inside the skeleton: %q", out)
	}
}

func TestGetNotFoundAndInvalid(t *testing.T) {
	r, data := openTest(t)
	_, err := r.Get("nope")
	if errs.CodeOf(err) != errs.CodeNotFound {
		t.Fatalf("Get(nope) code = %v (%v)", errs.CodeOf(err), err)
	}
	msg := errs.Public(err)
	if !strings.Contains(msg, `"nope"`) || !strings.Contains(msg, "host") {
		t.Errorf("message %q must name the template and list host", msg)
	}
	if strings.Contains(msg, data) || strings.Contains(msg, "/") {
		t.Errorf("message %q leaks a path", msg)
	}
	if strings.Contains(err.Error(), data) {
		t.Errorf("error %q leaks a path", err)
	}

	for _, name := range []string{"", "../etc", "Host", ".build-x", strings.Repeat("a", 5000)} {
		_, err := r.Get(name)
		if errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("Get(%.20q) code = %v, want invalid", name, errs.CodeOf(err))
		}
		if msg := errs.Public(err); len(msg) > 300 {
			t.Errorf("Get(%.20q) message is %d bytes: unbounded echo", name, len(msg))
		}
	}
}

func TestList(t *testing.T) {
	r, data := openTest(t)
	dir := filepath.Join(data, "templates")
	mk := func(name string, withMeta bool) {
		if err := os.MkdirAll(filepath.Join(dir, name, rootfsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if withMeta {
			if err := writeMeta(filepath.Join(dir, name), meta{Name: name, Description: "d " + name, SizeBytes: 42}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("alpha", true)
	mk("beta", false) // being written or broken: not ready
	mk(".build-zeta-0123456789abcdef", true)
	mk("UPPER", true)
	mustWrite(t, filepath.Join(dir, "junk"), "x", 0o644)
	// A rootfs that is a symlink is never served (it could point at /).
	if err := os.MkdirAll(filepath.Join(dir, "gamma"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(dir, "gamma", rootfsDir)); err != nil {
		t.Fatal(err)
	}
	if err := writeMeta(filepath.Join(dir, "gamma"), meta{Name: "gamma"}); err != nil {
		t.Fatal(err)
	}

	infos, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range infos {
		s := i.Name
		if i.Ready {
			s += "+"
		}
		got = append(got, s)
	}
	if diff := cmp.Diff([]string{"alpha+", "beta", "gamma", "host+"}, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if infos[0].Description != "d alpha" || infos[0].SizeBytes != 42 {
		t.Errorf("alpha info = %+v", infos[0])
	}
	if _, err := r.Get("alpha"); err != nil {
		t.Errorf("Get(alpha): %v", err)
	}
	for _, n := range []string{"beta", "gamma"} {
		if _, err := r.Get(n); errs.CodeOf(err) != errs.CodeNotFound {
			t.Errorf("Get(%s) = %v, want not found", n, err)
		}
	}
	_, err = r.Get("nope")
	if msg := errs.Public(err); !strings.Contains(msg, "available: alpha, host)") {
		t.Errorf("not-found message %q must list exactly the ready templates", msg)
	}
}

func TestOpenRemovesStaleBuilds(t *testing.T) {
	requireRoot(t)
	data := t.TempDir()
	dir := filepath.Join(data, "templates")
	stale := filepath.Join(dir, ".build-debian-0000000000000000")
	live := filepath.Join(dir, ".build-debian-1111111111111111")
	oldT := filepath.Join(dir, ".old-debian-2222222222222222")
	for _, d := range []string{stale, live, oldT} {
		mustWrite(t, filepath.Join(d, "rootfs/etc/passwd"), "x", 0o644)
	}
	f, locked, err := tryLockDir(live)
	if err != nil || !locked {
		t.Fatalf("lock: %v %v", locked, err)
	}
	defer f.Close()
	if _, err := Open(data, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{stale, oldT} {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: stale build not removed", filepath.Base(d))
		}
	}
	if _, err := os.Stat(filepath.Join(live, "rootfs/etc/passwd")); err != nil {
		t.Errorf("a live (locked) build was touched: %v", err)
	}
}

func TestDeniedName(t *testing.T) {
	for _, n := range []string{"shadow", "Shadow-", "sudoers.d", "ssh", "machine-id", "server.key", "cert.PEM", "krb5.conf",
		"aws_credentials", "client_secret.json", "id_ed25519", "hostname", "private"} {
		if !deniedName(n) {
			t.Errorf("deniedName(%q) = false", n)
		}
	}
	for _, n := range []string{"alternatives", "fonts", "conf.d", "10-hinting.conf", "vimrc", "bash.bashrc", "ld.so.cache", "sitecustomize.py", "awk"} {
		if deniedName(n) {
			t.Errorf("deniedName(%q) = true", n)
		}
	}
}

// BenchmarkGetHost measures the per-sandbox-create lookup.
func BenchmarkGetHost(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	r, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := r.Get(HostName); err != nil {
			b.Fatal(err)
		}
	}
}
