//go:build linux

package console_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
