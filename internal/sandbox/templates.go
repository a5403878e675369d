package sandbox

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/template"
	"github.com/paddockhq/paddock/wire"
)

// templateLister is a Templates that can list what it has
// (template.Registry can).
type templateLister interface {
	List() ([]template.Info, error)
}

// ListTemplates lists the templates sandboxes can start from.
func (m *Manager) ListTemplates(ctx context.Context, sc Scope) ([]wire.Template, error) {
	if err := sc.Need(rights.Read); err != nil {
		return nil, err
	}
	l, ok := m.tpl.(templateLister)
	if !ok {
		return nil, errs.New(errs.CodeUnsupported, "this server cannot list its templates")
	}
	list, err := l.List()
	if err != nil {
		return nil, err
	}
	out := make([]wire.Template, 0, len(list))
	for _, t := range list {
		out = append(out, wire.Template{Name: t.Name, Description: t.Description, CreatedAt: t.CreatedAt,
			SizeBytes: t.SizeBytes, Ready: t.Ready})
	}
	return out, nil
}
