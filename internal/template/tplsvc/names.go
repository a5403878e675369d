package tplsvc

import (
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/template"
)

// Naming (docs/templates.md, "Tenancy"): one registry directory holds
// every template. A shared template (host, debian, what an admin
// publishes) is stored under its own name; a tenant's own template N is
// stored as "<tenant>.<N>" and records its tenant in its metadata, so
// the stored name alone never decides ownership (a shared template named
// "acme.x" is not tenant acme's "x"). A tenant sees its own templates and
// the shared ones, its own winning on a name clash; another tenant's are
// "not found".

// stored is the registry name of tenant's template name (shared: "").
func stored(tenant, name string) (string, error) {
	if !template.ValidName(name) {
		return "", errs.Invalid("invalid template name %q: use lower-case letters, digits, '.', '_' and '-', at most %d characters", clip(name), template.MaxNameLen)
	}
	if tenant == "" {
		return name, nil
	}
	s := tenant + "." + name
	if len(s) > template.MaxNameLen {
		return "", errs.Invalid("template name %q is too long for tenant %s: tenant and name together take at most %d characters", clip(name), tenant, template.MaxNameLen-1)
	}
	return s, nil
}

// visible is the name tenant knows stored template info by, if it may
// see it at all.
func visible(tenant string, info template.Info) (name string, shared, ok bool) {
	if info.Tenant == "" {
		return info.Name, true, true
	}
	if info.Tenant != tenant {
		return "", false, false
	}
	return strings.TrimPrefix(info.Name, info.Tenant+"."), false, true
}

func clip(s string) string {
	if len(s) > 70 {
		s = s[:70] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
