//go:build linux

package template

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"host", true}, {"debian", true}, {"a", true}, {"0", true}, {"py3.11_slim-v2", true},
		{strings.Repeat("a", 63), true}, {strings.Repeat("a", 64), false},
		{"", false}, {".", false}, {"..", false}, {".build-x", false}, {"-x", false}, {"_x", false},
		{"Debian", false}, {"a/b", false}, {"../x", false}, {"a b", false}, {"a\x00", false},
		{"é", false}, {"a:b", false}, {"a\n", false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.ok {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"host", "debian", "", ".", "..", "a/b", "-a", "a-", strings.Repeat("z", 63), strings.Repeat("z", 64), "A", "a\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := ValidName(s)
		if want := nameRE.MatchString(s); got != want {
			t.Fatalf("ValidName(%q) = %v, regexp says %v", s, got, want)
		}
		if got && (strings.ContainsAny(s, `/\`) || s == "." || s == ".." || filepath.Clean(s) != s || strings.HasPrefix(s, ".")) {
			t.Fatalf("ValidName(%q) accepted a path-like name", s)
		}
	})
}

func TestMirrorOneLine(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"deb http://deb.debian.org/debian bookworm main\n", "http://deb.debian.org/debian"},
		{"deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] https://ftp.de.debian.org/debian/ bookworm main", "https://ftp.de.debian.org/debian"},
		{"deb [ arch=amd64 ] http://m.example/debian bookworm main", "http://m.example/debian"},
		{"# deb http://deb.debian.org/debian bookworm main\ndeb-src http://deb.debian.org/debian bookworm main", ""},
		{"deb http://security.debian.org/debian-security bookworm-security main\ndeb http://x.example/debian sid main", "http://x.example/debian"},
		{"deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main", ""},
		{"deb http://user:pw@mirror.example/debian bookworm main", ""},
		{"deb ftp://ftp.debian.org/debian bookworm main", ""},
		{"deb -o/debian bookworm main", ""},
		{"deb http://deb.debian.org/debian", ""}, // no suite
		{"deb [unterminated http://deb.debian.org/debian bookworm", ""},
	}
	for _, tt := range tests {
		got, ok := mirrorFromOneLine(tt.in)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("mirrorFromOneLine(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

func TestMirrorDeb822(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n", "http://deb.debian.org/debian"},
		{"Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n\n" +
			"Types: deb deb-src\nURIs: http://a.example/ubuntu\n http://b.example/debian/\nSuites: bookworm\n", "http://b.example/debian"},
		{"Types: deb-src\nURIs: http://deb.debian.org/debian\n", ""},
		{"Enabled: no\nTypes: deb\nURIs: http://deb.debian.org/debian\n\nTypes: deb\nURIs: http://c.example/debian\n", "http://c.example/debian"},
		{"types: deb\nuris: https://d.example/debian\n", "https://d.example/debian"},
		{"URIs: http://deb.debian.org/debian\n", ""}, // no Types
		{" continuation without field\n", ""},
	}
	for _, tt := range tests {
		got, ok := mirrorFromDeb822(tt.in)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("mirrorFromDeb822(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

func TestDetectMirror(t *testing.T) {
	apt := t.TempDir()
	if got := detectMirror(apt); got != DefaultMirror {
		t.Errorf("empty apt dir: %q", got)
	}
	mustWrite(t, filepath.Join(apt, "sources.list.d/a.list"), "deb https://packages.cloud.google.com/apt cloud-sdk main\n", 0o644)
	mustWrite(t, filepath.Join(apt, "sources.list.d/b.list.disabled"), "deb http://disabled.example/debian sid main\n", 0o644)
	mustWrite(t, filepath.Join(apt, "sources.list.d/c.sources"), "Types: deb\nURIs: http://c.example/debian\n", 0o644)
	mustWrite(t, filepath.Join(apt, "sources.list.d/d.list"), "deb http://d.example/debian sid main\n", 0o644)
	if got := detectMirror(apt); got != "http://c.example/debian" {
		t.Errorf("sources.list.d: %q", got)
	}
	mustWrite(t, filepath.Join(apt, "sources.list"), "deb http://first.example/debian sid main\n", 0o644)
	if got := detectMirror(apt); got != "http://first.example/debian" {
		t.Errorf("sources.list first: %q", got)
	}
	// This Debian 12 host (deb822 debian.sources).
	if got := detectMirror("/etc/apt"); checkMirror(got) != nil {
		t.Errorf("host mirror %q is not valid", got)
	} else {
		t.Logf("host mirror: %s", got)
	}
}

func checkMirrorResult(t *testing.T, m string) {
	t.Helper()
	if err := checkMirror(m); err != nil {
		t.Fatalf("parsed mirror %q fails checkMirror: %v", m, err)
	}
	u, _ := url.Parse(m)
	if filepath.Base(strings.TrimRight(u.Path, "/")) != "debian" || strings.HasPrefix(m, "-") || strings.HasSuffix(m, "/") {
		t.Fatalf("parsed mirror %q is not a Debian archive URL", m)
	}
}

func FuzzMirrorOneLine(f *testing.F) {
	f.Add("deb http://deb.debian.org/debian bookworm main\n")
	f.Add("deb [signed-by=/x] https://m/debian/ sid main # c\n")
	f.Add("deb [ x\n")
	f.Fuzz(func(t *testing.T, s string) {
		if m, ok := mirrorFromOneLine(s); ok {
			checkMirrorResult(t, m)
		}
	})
}

func FuzzMirrorDeb822(f *testing.F) {
	f.Add("Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n")
	f.Add("Enabled: no\nTypes: deb\nURIs: http://a/debian\n\nTypes: deb\nURIs:\n http://b/debian\n")
	f.Fuzz(func(t *testing.T, s string) {
		if m, ok := mirrorFromDeb822(s); ok {
			checkMirrorResult(t, m)
		}
	})
}

func TestCheckMirror(t *testing.T) {
	for _, m := range []string{"http://deb.debian.org/debian", "https://m.example:8443/debian/"} {
		if err := checkMirror(m); err != nil {
			t.Errorf("checkMirror(%q) = %v", m, err)
		}
	}
	for _, m := range []string{"", "--include=evil", "ftp://x/debian", "file:///srv/debian", "http://u:p@x/debian", "http://x/debian bookworm main",
		"http:///debian", "http://x/debian?a=1", "http://x/debian\n", "deb http://x/debian", strings.Repeat("h", maxMirrorLen+1)} {
		if err := checkMirror(m); err == nil {
			t.Errorf("checkMirror(%q) accepted", m)
		}
	}
}

func TestParseMountPoints(t *testing.T) {
	in := "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" +
		"23 22 0:5 / /dev rw - devtmpfs udev rw\n" +
		"24 22 0:40 / /tmp/with\\040space/x\\134y rw - tmpfs tmpfs rw\n" +
		"short line\n\n" +
		"25 22 0:41 / /odd\\9 rw - tmpfs t rw\n"
	want := []string{"/", "/dev", `/tmp/with space/x\y`, `/odd\9`}
	if diff := cmp.Diff(want, parseMountPoints(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	mps := []string{"/", "/data/templates/.build-x/rootfs/proc", "/data/templates/.build-xy", "/data/templates/.build-x"}
	if diff := cmp.Diff([]string{mps[1], mps[3]}, mountsUnder(mps, "/data/templates/.build-x")); diff != "" {
		t.Errorf("mountsUnder (-want +got):\n%s", diff)
	}
}

func FuzzParseMountPoints(f *testing.F) {
	f.Add("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
	f.Add("1 2 3 4 /a\\040b\\\\777\\0 x\n")
	f.Fuzz(func(t *testing.T, s string) {
		mps := parseMountPoints(s)
		if len(mps) > strings.Count(s, "\n")+1 {
			t.Fatalf("%d mount points from %d lines", len(mps), strings.Count(s, "\n")+1)
		}
		for _, m := range mps {
			_ = mountsUnder([]string{m}, "/x")
		}
	})
}

const debPasswd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"

func TestAddSandboxUser(t *testing.T) {
	base := accountFiles{passwd: []byte(debPasswd), group: []byte("root:x:0:\nusers:x:100:\n"), shadow: []byte("root:*:19000:0:99999:7:::\n"), gshadow: []byte("root:*::\n")}
	got, err := addSandboxUser(base, "/bin/bash")
	if err != nil {
		t.Fatal(err)
	}
	want := accountFiles{
		passwd:  []byte(debPasswd + "user:x:1000:1000::/home/user:/bin/bash\n"),
		group:   []byte("root:x:0:\nusers:x:100:\nuser:x:1000:\n"),
		shadow:  []byte("root:*:19000:0:99999:7:::\nuser:!::0:99999:7:::\n"),
		gshadow: []byte("root:*::\nuser:!::\n"),
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(accountFiles{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Idempotent.
	again, err := addSandboxUser(got, "/bin/bash")
	if err != nil || !cmp.Equal(again, got, cmp.AllowUnexported(accountFiles{})) {
		t.Errorf("second add changed the files: %v", err)
	}
	// No shadow file stays no shadow file; a missing final newline is fixed.
	noShadow, err := addSandboxUser(accountFiles{passwd: []byte("root:x:0:0::/root:/bin/sh"), group: []byte("root:x:0:")}, "/bin/sh")
	if err != nil || noShadow.shadow != nil || noShadow.gshadow != nil || !strings.HasSuffix(string(noShadow.passwd), "/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n") {
		t.Errorf("no shadow: %+v %v", noShadow, err)
	}

	bad := []accountFiles{
		{passwd: []byte("daemon:x:1:1::/:/bin/sh\n"), group: []byte("")},                            // no root
		{passwd: []byte(debPasswd + "user:x:1001:1001::/home/user:/bin/sh\n"), group: []byte("")},   // name taken
		{passwd: []byte(debPasswd + "alice:x:1000:1000::/home/alice:/bin/sh\n"), group: []byte("")}, // uid taken
		{passwd: []byte(debPasswd), group: []byte("alice:x:1000:\n")},                               // gid taken
		{passwd: []byte(debPasswd), group: []byte("user:x:1001:\n")},                                // group name taken
		{passwd: []byte(debPasswd), group: []byte(strings.Repeat("g:x:1:\n", maxAccountDB/7+1))},    // too big
		{passwd: []byte("root:x:0:0::/root\n"), group: []byte("")},                                  // malformed root line
	}
	for i, in := range bad {
		if _, err := addSandboxUser(in, "/bin/bash"); err == nil {
			t.Errorf("case %d: accepted", i)
		}
	}
}

func FuzzAddSandboxUser(f *testing.F) {
	f.Add(debPasswd, "root:x:0:\n", "root:*::::::\n")
	f.Add("root:x:0:0::/:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh", "user:x:1000:", "")
	f.Fuzz(func(t *testing.T, passwd, group, shadow string) {
		out, err := addSandboxUser(accountFiles{passwd: []byte(passwd), group: []byte(group), shadow: []byte(shadow)}, "/bin/sh")
		if err != nil {
			return
		}
		found := false
		for _, l := range lines(out.passwd) {
			if f := strings.Split(l, ":"); len(f) == 7 && f[0] == "user" && f[2] == "1000" {
				found = true
			}
		}
		if !found || !hasEntry(out.group, "user") || !hasEntry(out.shadow, "user") {
			t.Fatalf("success without the user:\n%s\n%s\n%s", out.passwd, out.group, out.shadow)
		}
	})
}

func TestValidPackageAndSuite(t *testing.T) {
	for _, p := range []string{"python3", "g++", "libc6:amd64", "python3.11-venv", "0ad"} {
		if !validPackage(p) {
			t.Errorf("validPackage(%q) = false", p)
		}
	}
	for _, p := range []string{"", "a", "-oAPT::Get=1", "vim,curl", "vim curl", "Vim", "vim=2:9", "vim:", "vim:-x", "+x", "a/b", "vim:amd64:x"} {
		if validPackage(p) {
			t.Errorf("validPackage(%q) = true", p)
		}
	}
	for _, s := range []string{"bookworm", "stable", "bookworm-backports", "sid", "trixie"} {
		if !validSuite(s) {
			t.Errorf("validSuite(%q) = false", s)
		}
	}
	for _, s := range []string{"", "-x", "12.5", "Bookworm", "a b", "a/b", "--mode=root"} {
		if validSuite(s) {
			t.Errorf("validSuite(%q) = true", s)
		}
	}
}

func FuzzValidPackage(f *testing.F) {
	for _, s := range []string{"python3", "libc6:amd64", "-o", "a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if validPackage(s) && (strings.HasPrefix(s, "-") || strings.ContainsAny(s, ", \t\n=/") || len(s) > maxPackageLen) {
			t.Fatalf("validPackage(%q) accepted an unsafe name", s)
		}
		if validSuite(s) && (strings.HasPrefix(s, "-") || strings.ContainsAny(s, ", \t\n=/")) {
			t.Fatalf("validSuite(%q) accepted an unsafe suite", s)
		}
	})
}

func TestLineWriter(t *testing.T) {
	var buf strings.Builder
	out := &progressWriter{w: &buf}
	lw := &lineWriter{out: out, repl: strings.NewReplacer("/data/templates/.build-x/rootfs", "$ROOTFS")}
	for _, chunk := range []string{"I: one", " two\nI: copying to /data/templates/.build-x/rootfs/etc\n", "\x1b[31mred\x1b[0m\r\n",
		strings.Repeat("x", maxOutputLine+10) + "tail-of-long\nafter\n", "partial"} {
		lw.Write([]byte(chunk))
	}
	lw.Flush()
	wantLines := []string{
		"  | I: one two",
		"  | I: copying to $ROOTFS/etc",
		"  | ?[31mred?[0m",
		"  | " + strings.Repeat("x", maxOutputLine) + " [truncated]",
		"  | after",
		"  | partial",
	}
	if diff := cmp.Diff(strings.Join(wantLines, "\n")+"\n", buf.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for i := 0; i < 3*outputTail; i++ {
		lw.Write([]byte("l\n"))
	}
	if n := len(lw.Tail()); n != outputTail {
		t.Errorf("tail keeps %d lines, want %d", n, outputTail)
	}
}

func TestNormalizeOptions(t *testing.T) {
	o := DebianOptions{Include: []string{"curl", "bash", "curl"}}
	pkgs, err := o.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "debian" || o.Suite != "bookworm" || o.Mirror != "" {
		t.Errorf("defaults: %+v", o)
	}
	if diff := cmp.Diff(append(append([]string(nil), basePackages...), "curl"), pkgs); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
}
