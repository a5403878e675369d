//go:build linux

package hostile

import (
	"os"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/wire"
)

// The suite runs on one runtime per pass: PADDOCK_HOSTILE_RUNTIME=gvisor
// gives every sandbox of every case gVisor (the servers' default runtime);
// unset, native. `make test` runs both passes (issue 18: every case on
// both runtimes). A case that cannot apply to a runtime skips, saying why.
const runtimeEnv = "PADDOCK_HOSTILE_RUNTIME"

// suiteRuntime is the pass's runtime ("" for native). Asking for gVisor
// where runsc is missing fails the case rather than passing it untested.
func suiteRuntime(t testing.TB) string {
	t.Helper()
	rt := os.Getenv(runtimeEnv)
	switch rt {
	case "", wire.RuntimeNative:
		return ""
	case wire.RuntimeGVisor:
		if _, err := gvisor.FindRunsc(""); err != nil {
			t.Fatalf("%s=gvisor, but: %s", runtimeEnv, errs.Public(err))
		}
		return rt
	}
	t.Fatalf("%s=%q: want native or gvisor", runtimeEnv, rt)
	return ""
}

// onGVisor reports whether this pass runs on gVisor.
func onGVisor(t testing.TB) bool { return suiteRuntime(t) == wire.RuntimeGVisor }

// nativeOnly skips a case on the gVisor pass, with the reason it cannot
// apply there.
func nativeOnly(t testing.TB, why string) {
	t.Helper()
	if onGVisor(t) {
		t.Skip("native runtime only: " + why)
	}
}
