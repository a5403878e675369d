//go:build linux

package agent

import (
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// TestAgentServesTheProtocol: the agent serves exactly the routes of
// guestapi.Routes, each once (guestapi checks that its doc's table lists
// exactly those), so a route added on one side only fails here. The
// native agent serves all but the Pod agent's own; the Pod agent all.
func TestAgentServesTheProtocol(t *testing.T) {
	t.Run("native", func(t *testing.T) {
		checkServed(t, (&Agent{}).routes().Routes(), guestapi.PodOnlyRoutes)
	})
	t.Run("pod", func(t *testing.T) { checkServed(t, (&Agent{}).podRoutes().Routes(), nil) })
}

func checkServed(t *testing.T, served, absent []string) {
	t.Helper()
	for _, r := range served {
		if !slices.Contains(guestapi.Routes, r) {
			t.Errorf("the agent serves %s, which guestapi.Routes (and its table) lacks", r)
		}
	}
	for _, r := range guestapi.Routes {
		n := 0
		for _, s := range served {
			if s == r {
				n++
			}
		}
		want := 1
		if slices.Contains(absent, r) {
			want = 0
		}
		if n != want {
			t.Errorf("route %s is served %d times, want %d", r, n, want)
		}
	}
}
