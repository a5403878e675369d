// Package npmtest installs the npm packages a test pins (the unmodified
// SDKs and the console's build tools), the way users install them: npm ci
// from a committed lock file.
package npmtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Install runs `npm ci` for the package.json and package-lock.json in src,
// once per machine and lock (in the temp dir), and returns the directory
// that holds node_modules. A test without node or npm is skipped. pin,
// when given as "name@version", must be what the lock file pins. Install
// scripts are not run.
func Install(t testing.TB, src, pin string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (Node.js 20 and npm; .ci/run installs them): %v", tool, err)
		}
	}
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if pin != "" {
		i := strings.LastIndex(pin, "@")
		name, version := pin[:i], pin[i+1:]
		if !bytes.Contains(lock, []byte(`"node_modules/`+name+`": {`+"\n"+`      "version": "`+version+`"`)) {
			t.Fatalf("%s/package-lock.json does not pin %s", src, pin)
		}
	}
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	dir := filepath.Join(os.TempDir(), "paddock-npm-"+hex.EncodeToString(sum[:8]))
	marker := filepath.Join(dir, "node_modules", ".paddock-installed")
	if _, err := os.Stat(marker); err == nil {
		return dir
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		t.Fatalf("npm ci (%s): %v\n%s", src, err, out)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
