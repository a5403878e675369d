// Package processes tests background processes and interactive terminals
// end to end: REST API, Go client and CLI against real sandboxes.
package processes

import (
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
