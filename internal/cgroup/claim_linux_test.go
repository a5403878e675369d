package cgroup

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// One server per prefix: a second claim of the prefix is refused while
// the first holds it (each would sweep the other's sandboxes), and
// succeeds once it is released; another prefix is independent.
func TestClaim(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes cgroups")
	}
	prefix := "paddock-claim-" + strconv.Itoa(os.Getpid())
	h1, err := Detect(DefaultRoot, prefix)
	if err != nil {
		t.Skipf("needs cgroups: no hierarchy detected here: %v", err)
	}
	defer h1.RemovePrefix()
	release, err := h1.Claim()
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := Detect(DefaultRoot, prefix)
	if _, err := h2.Claim(); err == nil || !strings.Contains(err.Error(), "another paddock server uses the cgroup prefix") {
		t.Fatalf("a second claim of %s: %v", prefix, err)
	}
	other, _ := Detect(DefaultRoot, prefix+"-other")
	defer other.RemovePrefix()
	r3, err := other.Claim()
	if err != nil {
		t.Fatalf("another prefix: %v", err)
	}
	r3()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	r2, err := h2.Claim()
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	r2()
}
