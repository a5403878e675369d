package user

import (
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		name string
		uid  uint32
		ok   bool
	}{
		{"", 0, true}, {"root", 0, true}, {"user", 1000, true}, {"nobody", 0, false}, {"Root", 0, false},
	} {
		id, err := Lookup(c.name)
		if (err == nil) != c.ok || (c.ok && id.UID != c.uid) {
			t.Errorf("Lookup(%q) = %+v, %v", c.name, id, err)
		}
		if err != nil && errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("Lookup(%q): code %s", c.name, errs.CodeOf(err))
		}
	}
}
