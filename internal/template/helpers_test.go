//go:build linux

package template

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (chown to uid 1000, mknod, mounts)")
	}
}

// openTest opens a registry in a fresh data directory against the real host.
func openTest(t *testing.T) (*Registry, string) {
	t.Helper()
	requireRoot(t)
	data := t.TempDir()
	r, err := Open(data, testLogger(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return r, data
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustWrite(t *testing.T, p, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// leftovers lists staging or replaced-template directories in DATA/templates.
func leftovers(t *testing.T, data string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(data, "templates"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), stagingPrefix) || strings.HasPrefix(e.Name(), oldPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func passwdNames(passwd string) []string {
	var names []string
	for _, l := range lines([]byte(passwd)) {
		n, _, _ := strings.Cut(l, ":")
		names = append(names, n)
	}
	return names
}
