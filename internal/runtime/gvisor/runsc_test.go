package gvisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

func TestFindRunscRefusesWhatIsNotThePinnedRunsc(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho runsc\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable() // a Go binary, but not runsc
	for name, p := range map[string]string{
		"missing": filepath.Join(dir, "nope"), "not executable": notExec, "a script": script, "another Go program": self,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := FindRunsc(p)
			if errs.CodeOf(err) != errs.CodeUnsupported {
				t.Fatalf("got %v, want unsupported", err)
			}
			msg := errs.Public(err)
			if !strings.Contains(msg, "make deps") || !strings.Contains(msg, "--runsc") {
				t.Fatalf("the message does not say how to install runsc: %q", msg)
			}
			if strings.Contains(msg, dir) {
				t.Fatalf("the public message names a host path: %q", msg)
			}
		})
	}
}

func TestUnavailableRefusesCreates(t *testing.T) {
	_, err := FindRunsc(filepath.Join(t.TempDir(), "nope"))
	u := Unavailable{Err: err}
	if _, err := u.Create(t.Context(), runtime.Config{ID: "x"}); errs.CodeOf(err) != errs.CodeUnsupported {
		t.Fatalf("create: %v", err)
	}
	if u.Name() != "gvisor" {
		t.Fatal(u.Name())
	}
}

func TestCacheDirFollowsDepsScript(t *testing.T) {
	t.Setenv("PADDOCK_CACHE", "/x/cache")
	if got := DefaultRunscPath(); got != "/x/cache/runsc-"+RunscVersion+"/runsc" {
		t.Fatalf("DefaultRunscPath = %s", got)
	}
	// scripts/deps.sh pins the same version.
	b, err := os.ReadFile("../../../scripts/deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `runsc_version="`+RunscVersion+`"`) {
		t.Fatal("scripts/deps.sh builds another runsc version than RunscVersion")
	}
}
