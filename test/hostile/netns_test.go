//go:build linux

package hostile

import (
	"testing"

	"github.com/paddockhq/paddock/internal/testenv/netlab"
)

// netNS is a network namespace this test made: with loopback, the only
// place the suite ever sends packets to.
type netNS = netlab.NS

func newNetNS(t testing.TB) *netNS { return netlab.New(t) }
