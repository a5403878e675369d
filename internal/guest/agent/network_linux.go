//go:build linux

package agent

import (
	"errors"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// The sandbox's view of its network, changed at runtime by the host (a
// policy change, or a warm-pool sandbox given a network when claimed): the
// interface and the enforcement live on the host; here only resolv.conf,
// the network's block of /etc/hosts, extra files and the proxy variables.

// guestNet holds the sandbox-wide environment once the network changed it
// (copy-on-write: execs read a snapshot without locking).
type guestNet struct {
	mu  sync.Mutex // serialises updates
	env atomic.Pointer[map[string]string]
}

const (
	maxNetFiles     = 16
	maxNetFileBytes = 1 << 20
)

// maxNetworkHead bounds a network change (a CA bundle is its largest part).
const maxNetworkHead = 4 << 20

func (a *Agent) networkRoutes(m *rpc.Mux) {
	m.Handle(guestapi.RouteNetwork, rpc.Unary(maxNetworkHead, func(_ *http.Request, cfg *guestapi.NetworkConfig) (guestapi.Empty, error) {
		return guestapi.Empty{}, a.applyNetwork(*cfg)
	}))
}

// sandboxEnv is the sandbox-wide environment: the Config's, as changed by
// network updates since.
func (a *Agent) sandboxEnv() map[string]string {
	if m := a.net.env.Load(); m != nil {
		return *m
	}
	return a.cfg.Env
}

func (a *Agent) applyNetwork(cfg guestapi.NetworkConfig) error {
	if len(cfg.Files) > maxNetFiles {
		return errs.Invalid("at most %d network files", maxNetFiles)
	}
	for p, c := range cfg.Files {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" || len(c) > maxNetFileBytes {
			return errs.Invalid("network file %q is not a clean absolute path under 1 MiB", p)
		}
	}
	a.net.mu.Lock()
	defer a.net.mu.Unlock()
	if err := writeNetFile("/etc/resolv.conf", []byte(cfg.ResolvConf)); err != nil {
		return err
	}
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return errs.Wrap(errs.CodeInternal, err, "cannot read /etc/hosts")
	}
	if err := writeNetFile("/etc/hosts", []byte(guestapi.ReplaceHostsBlock(string(hosts), cfg.Hosts))); err != nil {
		return err
	}
	for p, c := range cfg.Files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return errs.Wrap(errs.CodeInternal, err, "cannot create the directory of %s", p)
		}
		if err := writeNetFile(p, []byte(c)); err != nil {
			return err
		}
	}
	cur := a.sandboxEnv()
	env := make(map[string]string, len(cur)+len(cfg.Env))
	for k, v := range cur {
		env[k] = v
	}
	for _, k := range cfg.Unset {
		delete(env, k)
	}
	for k, v := range cfg.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return errs.Invalid("invalid environment variable %q", k)
		}
		env[k] = v
	}
	a.net.env.Store(&env)
	a.logf("network updated: %d variables set, %d unset, %d files", len(cfg.Env), len(cfg.Unset), len(cfg.Files))
	return nil
}

// writeNetFile writes content to p through a temporary file and a rename,
// so that a resolver reading it concurrently sees the old or the new file,
// never half of one. A symlink at p (resolv.conf often is one) is
// replaced, not followed.
func writeNetFile(p string, content []byte) error {
	tmp := p + ".paddock-tmp"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot write %s", p)
	}
	_, werr := f.Write(content)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return errs.Wrap(errs.CodeInternal, werr, "cannot write %s", p)
	}
	return nil
}
