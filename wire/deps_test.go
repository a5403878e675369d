package wire_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// nonStandardDeps lists what pkg imports, transitively, beyond the
// standard library (go list -deps).
func nonStandardDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Skipf("go list %s: %v (no go command)", pkg, err)
	}
	var deps []string
	for _, l := range strings.Fields(string(out)) {
		if l != pkg {
			deps = append(deps, l)
		}
	}
	return deps
}

// wire is the API's shapes and nothing else: the standard library, and
// the browser's shapes (a leaf that is itself standard library only).
func TestWireImportsOnlyTheStandardLibrary(t *testing.T) {
	const browserWire = "github.com/paddockhq/paddock/internal/browser/wire"
	const codeWire = "github.com/paddockhq/paddock/internal/kernel/codewire"
	for _, d := range nonStandardDeps(t, "github.com/paddockhq/paddock/wire") {
		if d != browserWire && d != codeWire {
			t.Errorf("wire imports %s", d)
		}
	}
	for _, leaf := range []string{browserWire, codeWire} {
		if deps := nonStandardDeps(t, leaf); len(deps) != 0 {
			t.Errorf("%s imports %v", leaf, deps)
		}
	}
}

// The Go client is the SDK users build on: it brings no part of the
// server with it (no store, no SQLite, no runtime, no manager), only
// wire's shapes and its WebSocket library.
func TestClientImportsNoServer(t *testing.T) {
	const self = "github.com/paddockhq/paddock/"
	allowed := map[string]bool{self + "wire": true, self + "internal/browser/wire": true, self + "internal/kernel/codewire": true}
	for _, d := range nonStandardDeps(t, self+"client") {
		switch {
		case allowed[d]:
		case strings.HasPrefix(d, "github.com/coder/websocket"):
		case strings.HasPrefix(d, self):
			t.Errorf("client imports %s, a part of the server", d)
		default:
			t.Errorf("client imports %s", d)
		}
	}
}

// The check sees what it is meant to keep out: the REST API's package
// does bring the server (the store, the manager) with it.
func TestDepsSeeTheServer(t *testing.T) {
	const self = "github.com/paddockhq/paddock/"
	got := map[string]bool{}
	for _, d := range nonStandardDeps(t, self+"internal/api") {
		got[d] = true
	}
	for _, want := range []string{self + "internal/sandbox", self + "internal/store", "modernc.org/sqlite"} {
		if !got[want] {
			t.Errorf("internal/api's dependencies lack %s: the deps check is blind", want)
		}
	}
}
