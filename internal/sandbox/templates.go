package sandbox

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/template"
)

// templateLister is a Templates that can list what it has
// (template.Registry can).
type templateLister interface {
	List() ([]template.Info, error)
}

// ListTemplates lists the templates sandboxes can start from.
func (m *Manager) ListTemplates(ctx context.Context, sc Scope) ([]template.Info, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	l, ok := m.tpl.(templateLister)
	if !ok {
		return nil, errs.New(errs.CodeUnsupported, "this server cannot list its templates")
	}
	list, err := l.List()
	if list == nil && err == nil {
		list = []template.Info{}
	}
	return list, err
}
