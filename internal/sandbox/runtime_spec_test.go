package sandbox_test

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// A spec's runtime is native (omitted or named), gvisor, or refused by
// name; a tenant's default runtime fills an omitted one.
func TestNormalizeRuntime(t *testing.T) {
	l := sandbox.DefaultLimits(2)
	for _, tc := range []struct {
		runtime, def, want string
		invalid            bool
	}{
		{runtime: "", want: ""},
		{runtime: "native", want: "native"},
		{runtime: "gvisor", want: "gvisor"},
		{runtime: "", def: "gvisor", want: "gvisor"},
		{runtime: "native", def: "gvisor", want: "native"},
		{runtime: "kata", invalid: true},
		{runtime: "GVISOR", invalid: true},
		{runtime: "gvisor\x00", invalid: true},
	} {
		l.Default.Runtime = tc.def
		s, err := l.Normalize(sandbox.Spec{Runtime: tc.runtime})
		if tc.invalid {
			if !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("runtime %q: %v, want invalid", tc.runtime, err)
			}
			continue
		}
		if err != nil || s.Runtime != tc.want {
			t.Errorf("runtime %q (default %q): %q %v, want %q", tc.runtime, tc.def, s.Runtime, err, tc.want)
		}
	}
}
