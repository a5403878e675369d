//go:build linux && amd64

package harden

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/harden/internal/compat"
)

const i386Getpid = 20 // __NR_getpid in the i386 table

func archScenarios() map[string]scenario {
	return map[string]scenario{
		"int80-getpid": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			got := int(int32(compat.Int80(i386Getpid, 0, 0, 0)))
			if got != os.Getpid() {
				return "", fmt.Errorf("int 0x80 getpid = %d, want %d", got, os.Getpid())
			}
			return strconv.Itoa(got), nil
		},
		"getpid": func(env scenarioEnv) (string, error) {
			if err := env.apply(); err != nil {
				return "", err
			}
			return strconv.Itoa(os.Getpid()), nil
		},
	}
}

// TestSeccompKillsInt80: the i386 entry point carries AUDIT_ARCH_I386 and
// its own numbering; the filter must kill it before any number compare.
func TestSeccompKillsInt80(t *testing.T) {
	requireRoot(t)
	ctl := runChild(t, childSpec{scenario: "int80-getpid"})
	if ctl.signal != 0 {
		t.Skipf("int 0x80 natively: %s (IA32 emulation disabled?)", ctl)
	}
	if ctl.Err != "" {
		t.Fatalf("control: %s", ctl.Err)
	}
	res := runChild(t, childSpec{scenario: "int80-getpid", layers: layersSeccomp})
	if !matches(res, "SIGSYS") {
		t.Fatalf("restricted int 0x80: %s (out %q), want SIGSYS", res, res.Out)
	}
	// Same filter, native entry point: the process lives.
	if res := runChild(t, childSpec{scenario: "getpid", layers: layersSeccomp}); res.signal != 0 || res.Out == "" {
		t.Fatalf("native getpid under the filter: %s", res)
	}
}
