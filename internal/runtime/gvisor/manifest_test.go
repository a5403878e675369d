package gvisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func writeImage(t *testing.T, files map[string]string) (string, *Manifest) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := fileSums(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Format: manifestFormat, Runsc: RunscVersion, Sandbox: "sb1", Token: strings.Repeat("a", 64), Files: sums}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, ManifestName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, m
}

func TestReadManifest(t *testing.T) {
	dir, m := writeImage(t, map[string]string{"checkpoint.img": "state", "pages.img": strings.Repeat("p", 10000)})
	got, err := readManifest(dir)
	if err != nil {
		t.Fatalf("good image: %v", err)
	}
	if got.Bytes() != m.Bytes() || got.Bytes() != 10005 {
		t.Fatalf("bytes %d", got.Bytes())
	}
	for _, c := range []struct {
		name   string
		damage func()
		code   errs.Code
	}{
		{"byte flipped", func() { os.WriteFile(filepath.Join(dir, "checkpoint.img"), []byte("stAte"), 0o600) }, errs.CodeInvalid},
		{"truncated", func() { os.Truncate(filepath.Join(dir, "pages.img"), 5) }, errs.CodeInvalid},
		{"removed", func() { os.Remove(filepath.Join(dir, "pages.img")) }, errs.CodeInvalid},
		{"added", func() { os.WriteFile(filepath.Join(dir, "more.img"), nil, 0o600) }, errs.CodeInvalid},
		{"subdirectory", func() { os.Mkdir(filepath.Join(dir, "sub"), 0o700) }, errs.CodeInvalid},
		{"symlink", func() { os.Symlink("/etc/passwd", filepath.Join(dir, "link")) }, errs.CodeInvalid},
		{"no manifest", func() { os.Remove(filepath.Join(dir, ManifestName)) }, errs.CodeInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ = writeImage(t, map[string]string{"checkpoint.img": "state", "pages.img": strings.Repeat("p", 10000)})
			c.damage()
			_, err := readManifest(dir)
			if errs.CodeOf(err) != c.code {
				t.Fatalf("got %v (%s), want %s", err, errs.CodeOf(err), c.code)
			}
			if strings.Contains(errs.Public(err), dir) {
				t.Fatalf("public message names a host path: %q", errs.Public(err))
			}
		})
	}
}

func TestParseManifest(t *testing.T) {
	ok := Manifest{Format: manifestFormat, Runsc: RunscVersion, Sandbox: "sb", Token: strings.Repeat("a", 64),
		Files: []File{{Name: "checkpoint.img", Size: 1}}}
	for _, c := range []struct {
		name string
		mod  func(*Manifest)
		code errs.Code
	}{
		{"good", func(*Manifest) {}, ""},
		{"future format", func(m *Manifest) { m.Format = 9 }, errs.CodeUnsupported},
		{"other gVisor", func(m *Manifest) { m.Runsc = "release-20250101.0" }, errs.CodeUnsupported},
		{"bad sandbox", func(m *Manifest) { m.Sandbox = "../x" }, errs.CodeInvalid},
		{"short token", func(m *Manifest) { m.Token = "x" }, errs.CodeInvalid},
		{"no files", func(m *Manifest) { m.Files = nil }, errs.CodeInvalid},
		{"path in a name", func(m *Manifest) { m.Files[0].Name = "../../etc/passwd" }, errs.CodeInvalid},
		{"twice", func(m *Manifest) { m.Files = append(m.Files, m.Files[0]) }, errs.CodeInvalid},
		{"negative size", func(m *Manifest) { m.Files[0].Size = -1 }, errs.CodeInvalid},
		{"manifest listed", func(m *Manifest) { m.Files[0].Name = ManifestName }, errs.CodeInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := ok
			m.Files = append([]File(nil), ok.Files...)
			c.mod(&m)
			b, _ := json.Marshal(m)
			_, err := parseManifest(b)
			if errs.CodeOf(err) != c.code && !(c.code == "" && err == nil) {
				t.Fatalf("got %v, want %q", err, c.code)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	good, _ := json.Marshal(Manifest{Format: manifestFormat, Runsc: RunscVersion, Sandbox: "sb",
		Token: strings.Repeat("a", 64), Files: []File{{Name: "pages.img", Size: 3, CRC32C: 7}}})
	f.Add(good)
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(b)
		if err != nil {
			if errs.CodeOf(err) == errs.CodeInternal || errs.Public(err) == "" {
				t.Fatalf("unclear error %v", err)
			}
			return
		}
		for _, fl := range m.Files {
			if strings.ContainsAny(fl.Name, "/\x00") || fl.Name == "." || fl.Name == ".." {
				t.Fatalf("accepted file name %q", fl.Name)
			}
		}
	})
}
