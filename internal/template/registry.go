package template

import (
	"context"
	"io"
	"log/slog"
)

// Registry finds templates under dataDir/templates.
type Registry struct{}

// Open returns the registry, (re)building the host skeleton when it is
// missing or was made by another version of the builder.
func Open(dataDir string, log *slog.Logger) (*Registry, error) { panic("helper") }

// Get returns template name; an unknown or unready name is an errs.CodeNotFound
// error whose public message names the template and lists the available ones.
func (r *Registry) Get(name string) (*Template, error) { panic("helper") }

// List returns every template, sorted by name.
func (r *Registry) List() ([]Info, error) { panic("helper") }

// DebianOptions configure BuildDebian.
type DebianOptions struct {
	Name    string   // template name; default "debian"
	Suite   string   // default "bookworm"
	Mirror  string   // default: what the host's apt uses, else http://deb.debian.org/debian
	Include []string // extra packages; python3, bash, coreutils, ca-certificates, procps are always in
}

// BuildDebian builds a Debian root filesystem with mmdebstrap into a staging
// directory, adds the sandbox users (root, user uid 1000), /workspace and a
// synthesized /etc/hosts, resolv.conf, then atomically renames it into place.
// Progress lines go to progress. A failure leaves no partial template behind.
func (r *Registry) BuildDebian(ctx context.Context, o DebianOptions, progress io.Writer) error {
	panic("helper")
}
