//go:build linux

package kube

import (
	"testing"

	"github.com/paddockhq/paddock/internal/guest/agent"
	"github.com/paddockhq/paddock/internal/harden"
)

// TestPodCapsMatchTheGuest: the container is granted exactly what the
// guest keeps (it fails to start with less; more would be wasted on it).
func TestPodCapsMatchTheGuest(t *testing.T) {
	names := map[harden.Cap]string{harden.CapChown: "CHOWN", harden.CapDacOverride: "DAC_OVERRIDE",
		harden.CapDacReadSearch: "DAC_READ_SEARCH", harden.CapFowner: "FOWNER", harden.CapFsetid: "FSETID",
		harden.CapKill: "KILL", harden.CapSetgid: "SETGID", harden.CapSetuid: "SETUID", harden.CapSetpcap: "SETPCAP"}
	want := map[string]bool{}
	for _, c := range agent.PodCaps() {
		n, ok := names[c]
		if !ok {
			t.Fatalf("guest keeps capability %d this test does not know", c)
		}
		want[n] = true
	}
	got := map[string]bool{}
	for _, c := range podCaps {
		got[string(c)] = true
	}
	for n := range want {
		if !got[n] {
			t.Errorf("the guest keeps %s but the Pod does not grant it", n)
		}
	}
	for n := range got {
		if !want[n] {
			t.Errorf("the Pod grants %s the guest does not keep", n)
		}
	}
}
