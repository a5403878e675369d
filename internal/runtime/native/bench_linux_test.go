//go:build linux

package native_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// BenchmarkForkExec is the floor: a plain fork/exec of /bin/true by this
// process, in the same run as the sandbox benchmarks.
func BenchmarkForkExec(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecRoundTrip: `true` in an existing sandbox through the REST
// API (client → API → manager → guest → fork/exec and back).
func BenchmarkExecRoundTrip(b *testing.B) {
	e := testenv.New(b, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	req := client.ExecRequest{Cmd: []string{"/bin/true"}}
	for b.Loop() {
		if _, err := e.Client.Exec(ctx, sb.ID, req); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCreateExecDelete(b *testing.B, pool int) {
	e := testenv.New(b, testenv.Options{PoolSize: pool})
	ctx := context.Background()
	req := client.ExecRequest{Cmd: []string{"/bin/true"}}
	for b.Loop() {
		sb, err := e.Client.Create(ctx, client.Spec{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Client.Exec(ctx, sb.ID, req); err != nil {
			b.Fatal(err)
		}
		if err := e.Client.Delete(ctx, sb.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateExecDeleteCold: no warm pool.
func BenchmarkCreateExecDeleteCold(b *testing.B) { benchCreateExecDelete(b, 0) }

// BenchmarkCreateExecDeleteWarm: with a warm pool (it refills in the
// background between iterations, as it would between an agent's calls).
func BenchmarkCreateExecDeleteWarm(b *testing.B) { benchCreateExecDelete(b, 4) }
