package gvisor

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/errs"
)

// RunscVersion is the gVisor version this backend is written and tested
// against, and the one scripts/deps.sh builds. Checkpoint images are only
// restorable by the runsc that wrote them, so the version is pinned and a
// runsc of another version is refused.
const RunscVersion = "v0.0.0-20260701204157-69c2d17aea96"

// runscModule is the module runsc is built from.
const runscModule = "gvisor.dev/gvisor"

// InstallHint is the command that installs runsc, for error messages.
const InstallHint = "an operator must run `make deps` (scripts/deps.sh builds runsc " + RunscVersion +
	") or start the server with --runsc PATH"

// CacheDir is where scripts/deps.sh puts what it builds: $PADDOCK_CACHE,
// else /var/cache/paddock for root, else $XDG_CACHE_HOME/paddock (or
// ~/.cache/paddock). Keep in step with scripts/deps.sh.
func CacheDir() string {
	if d := os.Getenv("PADDOCK_CACHE"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/cache/paddock"
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "paddock")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "paddock")
}

// DefaultRunscPath is where scripts/deps.sh installs runsc.
func DefaultRunscPath() string {
	return filepath.Join(CacheDir(), "runsc-"+RunscVersion, "runsc")
}

// ErrNoRunsc is wrapped by every error that says runsc is missing or
// unusable.
var ErrNoRunsc = errors.New("runsc is not available")

// FindRunsc returns the runsc to use: path if set, else DefaultRunscPath.
// It fails with an unsupported error naming the install command when the
// file is missing, is not executable, or is not gVisor RunscVersion. The
// public message names no host path (the cause, for the log, does).
func FindRunsc(path string) (string, error) {
	if path == "" {
		path = DefaultRunscPath()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", noRunsc("is not installed", fmt.Errorf("runsc path %q: %w", path, err))
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", noRunsc("is not installed", err)
	}
	if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return "", noRunsc("is not an executable file", fmt.Errorf("%s: mode %v", abs, st.Mode()))
	}
	if err := checkRunscVersion(abs); err != nil {
		return "", err
	}
	return abs, nil
}

// checkRunscVersion reads the module version Go recorded in the binary
// (runsc built with `go install` reports VERSION_MISSING itself).
func checkRunscVersion(path string) error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return noRunsc("carries no Go build information (build it from the module proxy)", fmt.Errorf("%s: %w", path, err))
	}
	if bi.Main.Path != runscModule || bi.Path != runscModule+"/runsc" {
		return noRunsc("is not gVisor's runsc", fmt.Errorf("%s is %s", path, bi.Path))
	}
	if bi.Main.Version != RunscVersion {
		return noRunsc("is version "+bi.Main.Version+", this server needs "+RunscVersion,
			fmt.Errorf("%s is %s", path, bi.Main.Version))
	}
	return nil
}

// noRunsc is the unsupported error for a missing or wrong runsc.
func noRunsc(why string, cause error) error {
	return errs.Wrap(errs.CodeUnsupported, fmt.Errorf("%w: %w", ErrNoRunsc, cause),
		"gVisor is not available on this server: runsc %s; %s", why, InstallHint)
}
