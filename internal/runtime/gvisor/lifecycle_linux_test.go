//go:build linux

package gvisor_test

import (
	"strings"
	"testing"
)

func TestCreateExecDelete(t *testing.T) {
	e := newEnv(t, nil)
	inst := e.create(e.config())
	res := run(t, inst, "echo", "hello")
	if res.ExitCode != 0 || res.Stdout != "hello\n" {
		t.Fatalf("exec: %+v", res)
	}
	// The sandbox's kernel is gVisor's.
	res = run(t, inst, "uname", "-r")
	if !strings.Contains(res.Stdout, "gvisor") {
		t.Fatalf("uname -r = %q, want gVisor's kernel", res.Stdout)
	}
}
