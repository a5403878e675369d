//go:build linux

package native_test

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

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

// phaseLog keeps the create phases the backend logs at debug level.
type phaseLog struct {
	mu     sync.Mutex
	phases []string
}

func (p *phaseLog) Enabled(context.Context, slog.Level) bool { return true }
func (p *phaseLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *phaseLog) WithGroup(string) slog.Handler            { return p }
func (p *phaseLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "phases" {
			p.mu.Lock()
			p.phases = append(p.phases, a.Value.String())
			p.mu.Unlock()
		}
		return true
	})
	return nil
}

// phase returns the duration after "name@+" or "name=" in a phase line.
func phase(line, name string) (time.Duration, bool) {
	for _, f := range strings.Fields(strings.Trim(line, "[]")) {
		f = strings.Trim(f, "[]")
		for _, sep := range []string{"@+", "="} {
			if v, ok := strings.CutPrefix(f, name+sep); ok {
				d, err := time.ParseDuration(v)
				return d, err == nil
			}
		}
	}
	return 0, false
}

// BenchmarkGuestStart: a cold create, reported by the phases the backend
// times: guest-main-ms is from starting the guest to its main (exec and
// package initialisation: the lean guest's reason to be), guest-setup-ms
// its whole setup up to Ready.
func BenchmarkGuestStart(b *testing.B) {
	pl := &phaseLog{}
	e := testenv.New(b, testenv.Options{Log: slog.New(pl)})
	ctx := context.Background()
	for b.Loop() {
		sb, err := e.Client.Create(ctx, client.Spec{})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Client.Delete(ctx, sb.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var mainSum, setupSum time.Duration
	n := 0
	pl.mu.Lock()
	for _, l := range pl.phases {
		m, ok1 := phase(l, "main")
		s, ok2 := phase(l, "guest-setup")
		if ok1 && ok2 {
			mainSum, setupSum, n = mainSum+m, setupSum+s, n+1
		}
	}
	pl.mu.Unlock()
	if n == 0 {
		b.Fatalf("no phases logged: %q", pl.phases)
	}
	b.ReportMetric(float64(mainSum.Microseconds())/float64(n)/1000, "guest-main-ms")
	b.ReportMetric(float64(setupSum.Microseconds())/float64(n)/1000, "guest-setup-ms")
}
