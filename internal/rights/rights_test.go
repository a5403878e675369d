package rights

import (
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestFromScopes(t *testing.T) {
	for _, tc := range []struct {
		scopes   []string
		has, not []Right
	}{
		{[]string{"read"}, []Right{Read}, []Right{Write, Exec, Network, Secrets, Keys, Audit, Admin}},
		{[]string{"write"}, []Right{Write, Network, Secrets, Snapshots, Volumes, Templates}, []Right{Read, Exec, Keys, Audit, Admin}},
		{[]string{"exec"}, []Right{Exec}, []Right{Read, Write, Network}},
		{[]string{"read", "exec"}, []Right{Read, Exec}, []Right{Write}},
		{[]string{"admin"}, Every(), nil},
		{[]string{"bogus", ""}, nil, Every()},
		{nil, nil, Every()},
	} {
		s := FromScopes(tc.scopes)
		for _, r := range tc.has {
			if !s.Has(r) {
				t.Errorf("%v: lacks %s", tc.scopes, r)
			}
		}
		for _, r := range tc.not {
			if s.Has(r) {
				t.Errorf("%v: holds %s", tc.scopes, r)
			}
		}
	}
}

// Every right is granted by one of the key scopes, and admin holds them
// all: no right exists that no key can hold.
func TestEveryRightIsGranted(t *testing.T) {
	if len(Every()) != len(names) {
		t.Fatalf("Every lists %d rights, names %d", len(Every()), len(names))
	}
	for _, r := range Every() {
		g := r.Scope()
		switch g {
		case "read", "write", "exec", "admin":
		default:
			t.Errorf("%s is granted by %q, not a key scope", r, g)
		}
		if !FromScopes([]string{g}).Has(r) {
			t.Errorf("%s: its scope %q does not grant it", r, g)
		}
		if r.String() == "unknown" {
			t.Errorf("right %d has no name", r)
		}
		if !All.Has(r) {
			t.Errorf("All lacks %s", r)
		}
	}
	if Set(0).Has(0) {
		t.Error("the empty right is held")
	}
}

func TestNeed(t *testing.T) {
	key := Scope{Tenant: "a", Rights: Of(Read, Write)}
	if err := key.Need(Read); err != nil {
		t.Fatal(err)
	}
	err := key.Need(Exec)
	if errs.CodeOf(err) != errs.CodeForbidden || errs.Public(err) != `this key lacks the "exec" scope` {
		t.Fatalf("Need(exec) = %v", err)
	}
	// A right finer than the scopes is refused in the scope's words.
	if err := (Scope{Rights: Of(Read)}).Need(Network); errs.Public(err) != `this key lacks the "write" scope` {
		t.Fatalf("Need(network) = %v", err)
	}
	tok := Scope{Tenant: "a", Sandbox: "sb-x", Token: true, Rights: Of(Read)}
	if err := tok.Need(Write); errs.Public(err) != `this token lacks the "write" scope` {
		t.Fatalf("token Need(write) = %v", err)
	}
	// The zero Scope may do nothing.
	for _, r := range Every() {
		if (Scope{}).Need(r) == nil {
			t.Errorf("the zero scope holds %s", r)
		}
	}
	if s := Of(Read, Exec).Without(Exec); s.Has(Exec) || !s.Has(Read) || s.String() != "read" {
		t.Errorf("Without: %v", s)
	}
}
