package console_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv/npmtest"
)

// webDir is the console's sources.
var webDir = filepath.Join("..", "..", "web", "console")

// needNode skips t without Node.js and npm (.ci/run installs them).
func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (Node.js 20 and npm; .ci/run installs them): %v", tool, err)
		}
	}
}

// npmModules installs web/console's locked dependencies with npm ci (once
// per lock file and machine, in the temp dir) and returns the
// node_modules directory. Install scripts are not run: esbuild's binary
// comes in its platform package.
func npmModules(t *testing.T) string {
	return filepath.Join(npmtest.Install(t, webDir, ""), "node_modules")
}

// workDir is a copy of web/console with the installed node_modules.
func workDir(t *testing.T) string {
	t.Helper()
	mods := npmModules(t)
	dir := t.TempDir()
	for _, sub := range []string{"src", "e2e"} {
		if err := os.CopyFS(filepath.Join(dir, sub), os.DirFS(filepath.Join(webDir, sub))); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"build.mjs", "tsconfig.json", "package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(webDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAssetsReproducible rebuilds the page from web/console with the
// locked tools and compares it, byte for byte, with the committed
// internal/console/assets that the binary embeds. It also type-checks the
// sources. After changing web/console: make console.
func TestAssetsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("installs npm packages")
	}
	dir := workDir(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"node", "build.mjs", out}, {"node", "node_modules/typescript/bin/tsc", "--noEmit", "-p", "."}} {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	want, err := os.ReadDir("assets")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("the build makes %d files, assets/ holds %d: run make console", len(got), len(want))
	}
	for _, e := range want {
		a, _ := os.ReadFile(filepath.Join("assets", e.Name()))
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("assets/%s differs from a rebuild of web/console (%v): run make console and commit the result", e.Name(), err)
		}
	}
}
