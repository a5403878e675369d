package e2b

import (
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/template"
)

type fakeTemplates map[string]bool

func (f fakeTemplates) Get(name string) (*template.Template, error) {
	if f[name] {
		return &template.Template{Name: name}, nil
	}
	return nil, errs.NotFound("no template %q", name)
}

// code-interpreter-v1 maps to the built code-interpreter template
// (templates/code-interpreter/Dockerfile) when the server has it, and to
// the default template (host) when not; other names Paddock has are
// used as they are, unknown ones get the default.
func TestTemplateMapping(t *testing.T) {
	for _, tc := range []struct {
		have     fakeTemplates
		id, want string
	}{
		{fakeTemplates{"code-interpreter": true}, "code-interpreter-v1", "code-interpreter"},
		{fakeTemplates{"code-interpreter": true}, "code-interpreter", "code-interpreter"},
		{fakeTemplates{}, "code-interpreter-v1", ""},
		{fakeTemplates{"py": true}, "code-interpreter-v1", ""},
		{fakeTemplates{"py": true}, "py", "py"},
		{fakeTemplates{"py": true}, "base", ""},
		{fakeTemplates{"code-interpreter": true}, "", ""},
	} {
		s := &Server{o: Options{Templates: tc.have}}
		if got := s.template(tc.id); got != tc.want {
			t.Errorf("have %v: template(%q) = %q, want %q", tc.have, tc.id, got, tc.want)
		}
	}
}
