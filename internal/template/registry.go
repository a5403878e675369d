package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
)

// Well-known template names.
const (
	HostName          = "host"   // built by Open from the host's userland
	DefaultDebianName = "debian" // BuildDebian's default
)

const (
	metaFile      = "template.json" // written last: its presence means ready
	rootfsDir     = "rootfs"
	lockFileName  = ".lock" // serialises installs and stale cleanup
	stagingPrefix = ".build-"
	oldPrefix     = ".old-"
	maxMetaFile   = 64 << 10
	maxTemplates  = 4096 // entries List looks at
	maxNotFound   = 20   // names listed in a not-found message
)

// Registry finds templates under dataDir/templates.
type Registry struct {
	dir      string // DATA/templates, absolute
	dataDir  string
	hostRoot string // "/" outside tests
	aptDir   string // where the default mirror is looked up
	log      *slog.Logger

	mu       sync.Mutex
	building map[string]bool // names with a BuildDebian running in this process
	store    *layers.Store   // image templates' layers (UseLayerStore)
}

// meta is template.json.
type meta struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	CreatedAt   time.Time  `json:"created_at"`
	SizeBytes   int64      `json:"size_bytes"`
	Builder     string     `json:"builder,omitempty"`
	Suite       string     `json:"suite,omitempty"`
	Mirror      string     `json:"mirror,omitempty"`
	Packages    []string   `json:"packages,omitempty"`
	Kind        string     `json:"kind,omitempty"` // "" (a rootfs/ directory) or KindImage
	Image       *imageMeta `json:"image,omitempty"`
}

// Open returns the registry, (re)building the host skeleton when it is
// missing or was made by another version of the builder (or from other
// host inputs). It also removes staging directories that crashed builds
// left behind.
func Open(dataDir string, log *slog.Logger) (*Registry, error) {
	return open(dataDir, "/", log)
}

func open(dataDir, hostRoot string, log *slog.Logger) (*Registry, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dataDir == "" {
		return nil, errs.Invalid("template registry: empty data directory")
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template registry: bad data directory")
	}
	r := &Registry{
		dir:      filepath.Join(abs, "templates"),
		dataDir:  abs,
		hostRoot: hostRoot,
		aptDir:   filepath.Join(hostRoot, "etc/apt"),
		log:      log,
		building: make(map[string]bool),
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template registry: cannot create templates directory")
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	r.cleanStaleLocked()
	if err := r.ensureHostLocked(); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template registry: cannot build the host template")
	}
	return r, nil
}

// lock takes the registry-wide lock (across processes sharing DATA).
func (r *Registry) lock() (func(), error) {
	f, err := lockFile(filepath.Join(r.dir, lockFileName))
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "template registry: cannot lock")
	}
	return func() { f.Close() }, nil
}

// cleanStaleLocked removes staging and replaced-template directories that
// no live builder holds (their flock is released when the builder exits,
// however it exits).
func (r *Registry) cleanStaleLocked() {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		r.log.Warn("template cleanup: cannot list", "dir", r.dir, "err", err)
		return
	}
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || !(strings.HasPrefix(n, stagingPrefix) || strings.HasPrefix(n, oldPrefix)) {
			continue
		}
		p := filepath.Join(r.dir, n)
		f, locked, err := tryLockDir(p)
		if err != nil || !locked {
			continue
		}
		if err := removeTree(p); err != nil {
			r.log.Warn("template cleanup: cannot remove stale build", "path", p, "err", err)
		} else {
			r.log.Info("template cleanup: removed stale build", "path", p)
		}
		f.Close()
	}
}

// newStaging creates and flocks DATA/templates/.build-<name>-<random>.
// The flock marks it live for cleanStaleLocked; the caller closes it.
func (r *Registry) newStaging(name string, haveLock bool) (string, *os.File, error) {
	if !haveLock {
		unlock, err := r.lock()
		if err != nil {
			return "", nil, err
		}
		defer unlock()
	}
	p := filepath.Join(r.dir, stagingPrefix+name+"-"+durable.RandHex())
	if err := os.Mkdir(p, 0o755); err != nil {
		return "", nil, err
	}
	f, locked, err := tryLockDir(p)
	if err == nil && !locked {
		err = fmt.Errorf("staging directory %s is locked by someone else", p)
	}
	if err != nil {
		os.Remove(p)
		return "", nil, err
	}
	return p, f, nil
}

// installLocked moves staging to DATA/templates/<name>, replacing what is
// there in one atomic exchange, then removes the previous template.
func (r *Registry) installLocked(staging, name string) error {
	final := filepath.Join(r.dir, name)
	_, err := os.Lstat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Rename(staging, final); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		old := staging
		if err := exchange(staging, final); err != nil {
			if !exchangeUnsupported(err) {
				return err
			}
			// No RENAME_EXCHANGE on this filesystem: rename the old one
			// away, the new one in, and put the old back if that fails.
			old = filepath.Join(r.dir, oldPrefix+name+"-"+durable.RandHex())
			if err := os.Rename(final, old); err != nil {
				return err
			}
			if err := os.Rename(staging, final); err != nil {
				if rerr := os.Rename(old, final); rerr != nil {
					r.log.Error("template install: cannot restore previous template", "name", name, "err", rerr)
				}
				return err
			}
		}
		if err := removeTree(old); err != nil {
			r.log.Warn("template install: cannot remove previous template", "name", name, "path", old, "err", err)
		}
	}
	_ = durable.SyncDir(r.dir)
	return nil
}

func writeMeta(dir string, m meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, metaFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readMeta reads dir/template.json; a missing file is fs.ErrNotExist.
func readMeta(dir string) (*meta, error) {
	f, err := openNoFollow(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetaFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxMetaFile {
		return nil, fmt.Errorf("%s: over %d bytes", metaFile, maxMetaFile)
	}
	var m meta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", metaFile, err)
	}
	return &m, nil
}

// ready returns the metadata of template dir when it is complete.
func (r *Registry) ready(name string) (*meta, string, bool) {
	dir := filepath.Join(r.dir, name)
	m, err := readMeta(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("template metadata unreadable", "name", name, "err", err)
		}
		return nil, "", false
	}
	if m.Kind == KindImage {
		if m.Image == nil || len(m.Image.Layers) == 0 && m.Image.RefOwner == "" {
			return nil, "", false
		}
		return m, "", true
	}
	root := filepath.Join(dir, rootfsDir)
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return nil, "", false
	}
	return m, root, true
}

// Get returns template name; an unknown or unready name is an errs.CodeNotFound
// error whose public message names the template and lists the available ones.
func (r *Registry) Get(name string) (*Template, error) {
	if !ValidName(name) {
		return nil, errs.Invalid("invalid template name %s: use lower-case letters, digits, '.', '_' and '-', at most %d characters", quoteName(name), MaxNameLen)
	}
	m, root, ok := r.ready(name)
	if !ok {
		return nil, r.notFound(name)
	}
	t := &Template{
		Name:        name,
		Root:        root,
		Description: m.Description,
		CreatedAt:   m.CreatedAt,
		SizeBytes:   m.SizeBytes,
	}
	if name == HostName {
		t.Overlays = hostOverlays(root, r.hostRoot)
	}
	if m.Kind == KindImage {
		if err := r.imageTemplate(t, m); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (r *Registry) notFound(name string) error {
	var avail []string
	if infos, err := r.List(); err == nil {
		for _, i := range infos {
			if i.Ready {
				avail = append(avail, i.Name)
			}
		}
	}
	list := "none"
	if len(avail) > maxNotFound {
		list = strings.Join(avail[:maxNotFound], ", ") + fmt.Sprintf(", and %d more", len(avail)-maxNotFound)
	} else if len(avail) > 0 {
		list = strings.Join(avail, ", ")
	}
	return errs.NotFound("template %q not found (available: %s)", name, list)
}

// List returns every template, sorted by name. Directories that are not
// (yet) complete templates are listed with Ready false; staging
// directories of running builds are not listed.
func (r *Registry) List() ([]Info, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "cannot list templates")
	}
	var out []Info
	for _, e := range ents {
		if len(out) >= maxTemplates {
			r.log.Warn("template list truncated", "max", maxTemplates)
			break
		}
		if !e.IsDir() || !ValidName(e.Name()) {
			continue
		}
		info := Info{Name: e.Name()}
		if m, _, ok := r.ready(e.Name()); ok {
			info.Description, info.CreatedAt, info.SizeBytes, info.Ready = m.Description, m.CreatedAt, m.SizeBytes, true
			if m.Kind == KindImage {
				r.imageInfo(&info, m)
			}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
