package inject

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/template"
)

// Where the CA goes inside a sandbox. The bundle path is Debian's (and
// OpenSSL's default file there); the CA alone is for NODE_EXTRA_CA_CERTS,
// which adds to Node's own roots.
const (
	BundlePath = "/etc/ssl/certs/ca-certificates.crt"
	CAPath     = "/etc/ssl/certs/paddock-egress-ca.pem"
)

// maxBundle bounds a template's bundle: the guest takes network files of
// at most 1 MiB.
const maxBundle = 900 << 10

// Templates finds a sandbox's template (the template registry).
type Templates interface {
	Get(name string) (*template.Template, error)
}

// Hook gives each networked sandbox its CA (network.SetupHook).
type Hook struct {
	cas  *CAStore
	db   *store.DB // which template a sandbox runs
	tpls Templates
	log  *slog.Logger

	mu      sync.Mutex
	bundles map[string]bundle // template name → its bundle
}

type bundle struct {
	created time.Time // the template's, to notice a rebuilt one
	pem     string
}

// NewHook returns the setup hook.
func NewHook(cas *CAStore, db *store.DB, tpls Templates, log *slog.Logger) *Hook {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hook{cas: cas, db: db, tpls: tpls, log: log, bundles: map[string]bundle{}}
}

// Setup has the network.SetupHook signature: a sandbox whose policy has
// inject rules (p.Intercept) gets its CA, appended to the template's
// bundle and announced; others get nothing (no CA to trust, and no cost
// on their create). A rule added later installs it then; the CA, once
// made, stays the sandbox's for its life.
func (h *Hook) Setup(ctx context.Context, id string, p runtime.NetPolicy, s *runtime.NetSetup) error {
	if len(p.Intercept) == 0 {
		return nil
	}
	ca, err := h.cas.Ensure(ctx, id)
	if err != nil {
		return err
	}
	base, err := h.bundle(ctx, id)
	if err != nil {
		return err
	}
	if base != "" && base[len(base)-1] != '\n' {
		base += "\n"
	}
	if s.Files == nil {
		s.Files = map[string]string{}
	}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	s.Files[BundlePath] = base + ca.PEM
	s.Files[CAPath] = ca.PEM
	for _, k := range []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"} {
		s.Env[k] = BundlePath
	}
	s.Env["NODE_EXTRA_CA_CERTS"] = CAPath
	return nil
}

// bundle is the CA bundle of sandbox id's template ("" if it has none).
func (h *Hook) bundle(ctx context.Context, id string) (string, error) {
	row, err := h.db.GetSandbox(ctx, id)
	if err != nil {
		return "", fmt.Errorf("egress CA: the sandbox's record: %w", err)
	}
	tpl, err := h.tpls.Get(row.Template)
	if err != nil {
		return "", fmt.Errorf("egress CA: template %s: %w", row.Template, err)
	}
	h.mu.Lock()
	b, ok := h.bundles[tpl.Name]
	h.mu.Unlock()
	if ok && b.created.Equal(tpl.CreatedAt) {
		return b.pem, nil
	}
	pem, err := readBundle(tpl.Root)
	if err != nil {
		h.log.Warn("egress CA: the template's CA bundle cannot be read; sandboxes trust only their egress CA through SSL_CERT_FILE",
			"template", tpl.Name, "err", err)
		pem = ""
	}
	h.mu.Lock()
	if len(h.bundles) > 256 {
		clear(h.bundles)
	}
	h.bundles[tpl.Name] = bundle{created: tpl.CreatedAt, pem: pem}
	h.mu.Unlock()
	return pem, nil
}

// readBundle reads the template's bundle through an os.Root, so a symlink
// in the template cannot make the server read a host file into a sandbox.
func readBundle(root string) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := r.Open(BundlePath[1:])
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBundle+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxBundle {
		return "", fmt.Errorf("over %d bytes", maxBundle)
	}
	return string(b), nil
}
