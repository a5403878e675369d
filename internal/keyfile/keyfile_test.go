package keyfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.key")
	first, err := Load(path, "test key", "delete it")
	if err != nil || len(first) != Size {
		t.Fatalf("first Load: %d bytes, %v", len(first), err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("made with mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	again, err := Load(path, "test key", "delete it")
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("second Load gave another key (%v)", err)
	}

	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"readable by others", strings.Repeat("ab", Size) + "\n", 0o644, "readable by others"},
		{"not hex", "zz\n", 0o600, "delete it"},
		{"too short", "abcd\n", 0o600, "32 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.WriteFile(p, []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, tc.mode); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(p, "test key", "delete it"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
