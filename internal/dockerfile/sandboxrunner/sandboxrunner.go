// Package sandboxrunner runs Dockerfile RUN steps in Paddock sandboxes:
// the production dockerfile.Runner (docs/templates.md). Each step gets a
// throwaway sandbox from the sandbox manager (sandbox.Manager.RunStep),
// made by the native runtime like any other — user namespace, seccomp,
// Landlock, no_new_privs, cgroup limits, the egress policy — whose root is
// the overlay of the layers so far; its writable layer, captured by the
// runtime once the command exits, becomes the step's upper directory.
package sandboxrunner

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Limits are a build step's (serve's --builder-* flags).
type Limits struct {
	CPU      float64
	MemoryMB int64
	DiskMB   int64 // the step's writable layer
	Pids     int64
	Timeout  time.Duration // one RUN
}

// Defaults are the limits of a server that sets none.
var Defaults = Limits{CPU: 1, MemoryMB: 1024, DiskMB: 4096, Pids: 1024, Timeout: 30 * time.Minute}

// Stepper is what runs a step (*sandbox.Manager).
type Stepper interface {
	RunStep(ctx context.Context, r sandbox.StepRun, capture func(io.Reader) error) (sandbox.StepResult, error)
}

// Runner implements dockerfile.Runner.
type Runner struct {
	Steps  func() Stepper // the manager, made after the template service
	Limits Limits
}

// Run implements dockerfile.Runner.
func (r *Runner) Run(ctx context.Context, req dockerfile.RunRequest) (dockerfile.RunResult, error) {
	st := r.Steps()
	if st == nil {
		return dockerfile.RunResult{}, errs.New(errs.CodeUnavailable, "the sandbox manager is not running")
	}
	lim := r.Limits
	var net *sandbox.Network
	switch req.Network {
	case "", "none":
	case "allowlist":
		net = &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: req.Allow}
	default:
		return dockerfile.RunResult{}, errs.Invalid("build network must be none or allowlist")
	}
	out := req.Output
	if out == nil {
		out = io.Discard
	}
	res, err := st.RunStep(ctx, sandbox.StepRun{
		Tenant: rights.FromContext(ctx).Tenant, Lowers: req.Lowers, Argv: req.Cmd, Env: req.Env,
		WorkDir: req.WorkDir, UID: req.UID, GID: req.GID, Network: net,
		Limits:  sandbox.Spec{CPU: lim.CPU, MemoryMB: lim.MemoryMB, DiskMB: lim.DiskMB, Pids: lim.Pids},
		Timeout: lim.Timeout, Output: out,
	}, func(capture io.Reader) error {
		return collect(ctx, capture, req.Upper, lim.DiskMB<<20)
	})
	if err != nil {
		return dockerfile.RunResult{}, err
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(out, "\n[paddock] the step ran longer than the builder's limit of %s (--builder-timeout)\n", lim.Timeout)
		if res.ExitCode == 0 {
			res.ExitCode = 124
		}
	case res.OOMKilled:
		fmt.Fprintf(out, "\n[paddock] the step was killed: out of memory (the builder's limit is %d MiB, --builder-memory)\n", lim.MemoryMB)
	case res.Signal != "":
		fmt.Fprintf(out, "\n[paddock] the step was killed by %s\n", res.Signal)
	}
	if res.ExitCode == 0 && res.Signal != "" {
		res.ExitCode = 137
	}
	if res.ExitCode != 0 {
		return dockerfile.RunResult{ExitCode: res.ExitCode}, nil
	}
	if err := dropSetup(req.Upper); err != nil {
		return dockerfile.RunResult{}, fmt.Errorf("collect the upper layer: %w", err)
	}
	return dockerfile.RunResult{}, nil
}

// collect turns the runtime's capture of the step's writable layer into
// an OCI layer stream and unpacks that into upper with the layer store's
// hardened extractor (the tree was written by the untrusted step): the
// overlay's 0/0 whiteouts and opaque marks come back as the extractor
// makes them, owners stay sandbox ids.
func collect(ctx context.Context, capture io.Reader, upper string, max int64) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := toOCI(capture, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	_, err := layers.Extract(ctx, pr, upper, layers.Limits{MaxBytes: max})
	pr.CloseWithError(errors.New("extract done"))
	if cerr := <-done; err == nil && cerr != nil {
		err = cerr
	}
	return err
}

const (
	rootUpper    = "root/upper/"
	opaqueXattr  = "SCHILY.xattr.user.overlay.opaque"
	overlayXattr = "SCHILY.xattr.user.overlay."
)

// toOCI rewrites a capture ("root/upper/..." entries, whiteouts as 0/0
// character devices, opaque directories as user.overlay.opaque) as an OCI
// layer (".wh." files and ".wh..wh..opq" markers). Overlayfs' other
// bookkeeping attributes (impure, origin) are dropped; other overlays of
// a sandbox than its root do not exist over an image template.
func toOCI(r io.Reader, w io.Writer) error {
	tr := tar.NewReader(r)
	tw := tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		name, ok := strings.CutPrefix(h.Name, rootUpper)
		if !ok || name == "" {
			continue
		}
		opaque := false
		for k, v := range h.PAXRecords {
			if strings.HasPrefix(k, overlayXattr) {
				if k == opaqueXattr && v == "y" && h.Typeflag == tar.TypeDir {
					opaque = true
				}
				delete(h.PAXRecords, k)
			}
		}
		// The reader also fills the deprecated Xattrs from the same
		// records, and the writer would write them back: PAXRecords alone
		// carry the attributes kept.
		h.Xattrs = nil //nolint:staticcheck // cleared, not used
		h.Name = name
		if h.Typeflag == tar.TypeChar {
			dir, base := path.Split(strings.TrimSuffix(name, "/"))
			wh := &tar.Header{Typeflag: tar.TypeReg, Name: dir + ".wh." + base, Mode: 0o600, ModTime: h.ModTime, Format: tar.FormatPAX}
			if err := tw.WriteHeader(wh); err != nil {
				return err
			}
			continue
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, tr); err != nil {
				return err
			}
		}
		if opaque {
			m := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimSuffix(name, "/") + "/.wh..wh..opq", Mode: 0o600, ModTime: h.ModTime, Format: tar.FormatPAX}
			if err := tw.WriteHeader(m); err != nil {
				return err
			}
		}
	}
}

// The sandbox's own setup writes into its root: /etc/hostname, hosts and
// resolv.conf always (a RUN's changes to them are not kept, as with
// Docker, which mounts them), and the mount points and home directories
// it makes when the image lacks them.
var (
	setupFiles = []string{"etc/hostname", "etc/hosts", "etc/resolv.conf"}
	setupDirs  = []string{"home/user", "var/tmp", "proc", "dev", "tmp", "workspace", "root", "home", "run", "var", "etc"}
)

// dropSetup removes the sandbox's setup artefacts from upper: the three
// files, then each setup directory the step left empty (unless it is
// opaque: the step replaced the image's one).
func dropSetup(upper string) error {
	for _, f := range setupFiles {
		p := filepath.Join(upper, f)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	for _, d := range setupDirs {
		p := filepath.Join(upper, d)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || opaque(p) {
			continue
		}
		if ents, err := os.ReadDir(p); err == nil && len(ents) == 0 {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}
