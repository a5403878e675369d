package sandbox

import (
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/wire"
)

// The bounds the REST API documents (package wire) are the guest's.
func TestWireBoundsAreTheGuests(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wire, gust int64
	}{
		{"process timeout", wire.MaxProcessTimeoutMs, guestapi.MaxProcessTimeout.Milliseconds()},
		{"default lines", wire.DefaultLines, guestapi.DefaultLines},
		{"default line bytes", wire.DefaultLinesBytes, guestapi.DefaultLineBytes},
		{"max line bytes", wire.MaxLinesBytes, guestapi.MaxLinesBytes},
		{"line cut", wire.LineCutBytes, guestapi.LineCutBytes},
		{"line count window", wire.LineCountBytes, guestapi.LineCountBytes},
	} {
		if tc.wire != tc.gust {
			t.Errorf("%s: wire says %d, the guest %d", tc.name, tc.wire, tc.gust)
		}
	}
	if wire.LineCutMarker != guestapi.LineCutMarker {
		t.Errorf("line cut marker %q, the guest's %q", wire.LineCutMarker, guestapi.LineCutMarker)
	}
}
