package disk

import (
	"encoding/binary"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var idPattern = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

func FuzzValidID(f *testing.F) {
	for _, s := range []string{"a", "sbx-123_x", "", ".", "..", "../x", "a/b", "A", "é", ".projects",
		"lost+found", "x\x00", strings.Repeat("z", 64), strings.Repeat("z", 65), "-", "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ok := validID(id)
		if ok != idPattern.MatchString(id) {
			t.Fatalf("validID(%q) = %v, regexp disagrees", id, ok)
		}
		if (checkID(id) == nil) != ok {
			t.Fatalf("checkID(%q) disagrees with validID", id)
		}
		if !ok {
			return
		}
		// A valid id is exactly one path component under the base.
		base := "/data/mnt"
		p := filepath.Join(base, id)
		if filepath.Dir(p) != base || filepath.Base(p) != id || id == "." || id == ".." {
			t.Fatalf("id %q escapes %s as %s", id, base, p)
		}
	})
}

func TestParseMountinfo(t *testing.T) {
	in := "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n" +
		"42 27 7:0 / /tmp/a\\040b rw,nosuid,nodev,relatime - xfs /dev/loop0 rw,inode64,prjquota\n" +
		"43 27 0:50 / /x rw shared:3 master:2 - tmpfs tmpfs rw,size=1024k\n\n"
	ms, err := parseMountinfo([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 {
		t.Fatalf("%d entries", len(ms))
	}
	want := mountEntry{ID: 42, Parent: 27, Dev: "7:0", Root: "/", MountPoint: "/tmp/a b",
		MountOpts: "rw,nosuid,nodev,relatime", FSType: "xfs", Source: "/dev/loop0", SuperOpts: "rw,inode64,prjquota"}
	if ms[1] != want {
		t.Fatalf("got %+v\nwant %+v", ms[1], want)
	}
	if ms[2].FSType != "tmpfs" || ms[2].MountPoint != "/x" {
		t.Fatalf("optional fields mis-parsed: %+v", ms[2])
	}
	if m, ok := topMount(ms, "/tmp/a b"); !ok || m.ID != 42 {
		t.Fatal("topMount")
	}
	if !hasOpt(want.SuperOpts, "prjquota") || hasOpt(want.SuperOpts, "prj") {
		t.Fatal("hasOpt")
	}
	for _, bad := range []string{"1 2 3", "x 1 0:1 / / rw - a b c", "1 1 0:1 / / rw a b c"} {
		if _, err := parseMountinfo([]byte(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"))
	f.Add([]byte("42 27 7:0 / /tmp/a\\040b\\134 rw - xfs /dev/loop0 rw,prjquota\n1 1 0:1 / / rw - t s\n"))
	f.Add([]byte("1 2 3 4 5 6 - \n"))
	f.Add([]byte("\\777 \\ - - - - - - -"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := parseMountinfo(data)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.ID < 0 || m.Parent < 0 || m.FSType == "" || m.MountPoint == "" {
				t.Fatalf("accepted a bad entry %+v", m)
			}
		}
	})
}

func direntBytes(ino uint64, off int64, typ uint8, name string) []byte {
	reclen := (direntHeader + len(name) + 1 + 7) &^ 7
	b := make([]byte, reclen)
	binary.NativeEndian.PutUint64(b[0:], ino)
	binary.NativeEndian.PutUint64(b[8:], uint64(off))
	binary.NativeEndian.PutUint16(b[16:], uint16(reclen))
	b[18] = typ
	copy(b[direntHeader:], name)
	return b
}

func TestParseDirent(t *testing.T) {
	b := append(direntBytes(7, 99, 4, "hello"), direntBytes(8, 100, 8, "x")...)
	d, n, ok := parseDirent(b)
	if !ok || d != (dirent{Ino: 7, Off: 99, Type: 4, Name: "hello"}) || n != 32 {
		t.Fatalf("%+v %d %v", d, n, ok)
	}
	d, _, ok = parseDirent(b[n:])
	if !ok || d.Name != "x" || d.Type != 8 {
		t.Fatalf("%+v", d)
	}
	for _, bad := range [][]byte{nil, b[:10], direntBytes(1, 1, 1, "")} {
		if _, _, ok := parseDirent(bad); ok {
			t.Errorf("parsed %x", bad)
		}
	}
}

func FuzzParseDirent(f *testing.F) {
	f.Add(direntBytes(7, 99, 4, "hello"))
	f.Add(append(direntBytes(1, 2, 0, "."), direntBytes(1, 3, 0, "..")...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		for off := 0; off < len(b); {
			d, n, ok := parseDirent(b[off:])
			if !ok {
				return
			}
			if n <= direntHeader || off+n > len(b) || d.Name == "" || strings.IndexByte(d.Name, 0) >= 0 {
				t.Fatalf("bad entry %+v len %d", d, n)
			}
			off += n
		}
	})
}

func FuzzParseProjID(f *testing.F) {
	for _, s := range []string{"1", "1048576", "1048577", "0", "007", "+1", "-1", "", "4294967296", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseProjID(s)
		if err != nil {
			return
		}
		if v < 1 || v > maxProjects || strings.TrimLeft(s, "0123456789") != "" || s[0] == '0' {
			t.Fatalf("parseProjID(%q) = %d", s, v)
		}
	})
}
