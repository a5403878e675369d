//go:build linux

package agent

import (
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// TestAgentServesTheProtocol: the agent serves exactly the routes of
// guestapi.Routes, each once (guestapi checks that its doc's table lists
// exactly those), so a route added on one side only fails here.
func TestAgentServesTheProtocol(t *testing.T) {
	served := (&Agent{}).routes().Routes()
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
		if n != 1 {
			t.Errorf("route %s is served %d times", r, n)
		}
	}
}
