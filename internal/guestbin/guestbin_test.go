package guestbin

import (
	"bytes"
	"testing"
)

// Embedded and Guest agree, and what is embedded is an executable: a build
// either carries a guest (`make guest`) or it does not (plain go build).
func TestEmbeddedMatchesGuest(t *testing.T) {
	g := Guest()
	if got, want := Embedded(), g != nil; got != want {
		t.Fatalf("Embedded() = %v, but Guest() returned %d bytes", got, len(g))
	}
	if g != nil && !bytes.HasPrefix(g, []byte("\x7fELF")) {
		t.Fatalf("the embedded guest is not an ELF binary (starts %q)", g[:min(len(g), 8)])
	}
	if g == nil {
		t.Log("no embedded guest in this build (run make guest)")
	}
}
