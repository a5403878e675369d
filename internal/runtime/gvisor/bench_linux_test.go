//go:build linux

package gvisor_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
	"github.com/paddockhq/paddock/internal/runtime/native"
)

// Run side by side, in one sitting (docs/gvisor.md has the numbers):
//
//	go test -run '^$' -bench . -benchtime 10x ./internal/runtime/gvisor/

// BenchmarkRunscDoTrue is the floor: bare `runsc do /bin/true` (the host's
// root as the sandbox's, no network), with the same runsc.
func BenchmarkRunscDoTrue(b *testing.B) {
	requireGVisor(b)
	runsc, _ := gvisor.FindRunsc(os.Getenv("PADDOCK_RUNSC"))
	root := b.TempDir()
	for b.Loop() {
		out, err := exec.Command(runsc, "--root", root, "--network", "none", "--platform", "systrap", "do", "/bin/true").CombinedOutput()
		if err != nil {
			b.Fatalf("runsc do: %v: %s", err, out)
		}
	}
}

// BenchmarkCreateExecDelete: a gVisor sandbox created, `true` run in it
// through its agent, and destroyed (the caller is answered at once; the
// release finishes in the background, as on native).
func BenchmarkCreateExecDelete(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	for b.Loop() {
		inst, err := e.b.Create(ctx, e.config())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inst.Guest().Exec(ctx, guestapi.ExecRequest{Argv: []string{"/bin/true"}}, nil, &outBuf{}); err != nil {
			b.Fatal(err)
		}
		if err := e.b.Destroy(ctx, inst); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = e.b.Close() // wait for the releases
}

// benchExec runs `true` in inst; agent-ms is the part the agent measured
// (from the spawn to the exit), the rest is transport and the agent's
// request handling.
func benchExec(b *testing.B, inst runtime.Instance) {
	ctx := context.Background()
	req := guestapi.ExecRequest{Argv: []string{"/bin/true"}}
	var agent float64
	for b.Loop() {
		res, err := inst.Guest().Exec(ctx, req, nil, &outBuf{})
		if err != nil {
			b.Fatal(err)
		}
		agent += res.DurationMs
	}
	b.ReportMetric(agent/float64(b.N), "agent-ms")
}

// BenchmarkExecRoundTrip: `true` in a running gVisor sandbox through its
// agent (host → relay → agent in gVisor → fork/exec in gVisor → back).
func BenchmarkExecRoundTrip(b *testing.B) {
	e := newEnv(b, nil)
	benchExec(b, e.create(e.config()))
}

// BenchmarkHealthRoundTrip: a health request in a running gVisor sandbox
// (host → relay → agent → back, no process started): the transport's
// share of an exec round trip.
func BenchmarkHealthRoundTrip(b *testing.B) {
	e := newEnv(b, nil)
	inst := e.create(e.config())
	ctx := context.Background()
	for b.Loop() {
		if _, err := inst.Guest().Health(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecRoundTripNative: the same on the native runtime, same
// harness, same run.
func BenchmarkExecRoundTripNative(b *testing.B) {
	e := newEnv(b, nil)
	nb, err := native.New(native.Options{DataDir: filepath.Join(e.data, "native"), Cgroups: e.cg, Disk: e.disk,
		UIDBase: 1_600_000_000, Slots: 4, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	cfg := e.config()
	inst, err := nb.Create(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = nb.Destroy(context.Background(), inst)
		_ = nb.Close()
	}()
	benchExec(b, inst)
}

// memoryScript holds 100 MiB in a Python list and counts.
const memoryScript = `nohup /usr/bin/python3 -c '
import time
data = [bytes([i % 251]) * 1024 for i in range(100 * 1024)]
n = 0
while True:
    n += 1
    open("/tmp/count", "w").write(str(n))
    time.sleep(0.05)
' >/dev/null 2>&1 &`

// withMemory returns a sandbox whose Python process holds 100 MiB.
func withMemory(b testing.TB, e *env) runtime.Instance {
	b.Helper()
	cfg := e.config()
	cfg.Limits.MemoryBytes = 512 << 20
	inst := e.create(cfg)
	sh(b, inst, memoryScript)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if res := sh(b, inst, "cat /tmp/count 2>/dev/null"); res.Stdout != "" {
			return inst
		}
		if time.Now().After(deadline) {
			b.Fatal("the 100 MiB process did not start")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BenchmarkCheckpoint100MiB: a running sandbox's memory (a Python process
// holding 100 MiB) saved to a new image, the sandbox left running.
func BenchmarkCheckpoint100MiB(b *testing.B) {
	e := newEnv(b, nil)
	inst := withMemory(b, e)
	images := filepath.Join(e.data, "images")
	mustMkdir(b, images)
	i := 0
	var bytes int64
	for b.Loop() {
		i++
		m, err := e.b.Checkpoint(context.Background(), inst, gvisor.CheckpointOptions{Dir: filepath.Join(images, fmt.Sprint(i)), LeaveRunning: true})
		if err != nil {
			b.Fatal(err)
		}
		bytes = m.Bytes()
		b.StopTimer()
		_ = os.RemoveAll(filepath.Join(images, fmt.Sprint(i)))
		b.StartTimer()
	}
	b.ReportMetric(float64(bytes)/(1<<20), "image-MiB")
}

// BenchmarkRestore100MiB: a new sandbox restored from that image (until
// its agent answers), then destroyed.
func BenchmarkRestore100MiB(b *testing.B) {
	e := newEnv(b, nil)
	inst := withMemory(b, e)
	img := filepath.Join(e.data, "images", "one")
	mustMkdir(b, filepath.Dir(img))
	if _, err := e.b.Checkpoint(context.Background(), inst, gvisor.CheckpointOptions{Dir: img, LeaveRunning: true}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := e.b.Restore(context.Background(), e.config(), img)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = e.b.Destroy(context.Background(), r)
		b.StartTimer()
	}
	b.StopTimer()
	_ = e.b.Close()
}

// BenchmarkHibernateWake100MiB: a sandbox whose Python process holds 100
// MiB hibernated (checkpoint, sentry gone, everything released) and woken
// (restored under the same id, image removed), as the manager does;
// hibernate-ms and wake-ms are each half's mean.
func BenchmarkHibernateWake100MiB(b *testing.B) {
	e := newEnv(b, nil)
	inst := withMemory(b, e)
	cfg := e.config()
	cfg.ID, cfg.Limits.MemoryBytes = inst.ID(), 512<<20
	ctx := context.Background()
	var hib, wake time.Duration
	for b.Loop() {
		t := time.Now()
		if _, err := e.b.Hibernate(ctx, inst); err != nil {
			b.Fatal(err)
		}
		hib += time.Since(t)
		t = time.Now()
		woken, err := e.b.Wake(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		wake += time.Since(t)
		inst = woken
	}
	e.track(inst)
	b.ReportMetric(float64(hib.Milliseconds())/float64(b.N), "hibernate-ms")
	b.ReportMetric(float64(wake.Milliseconds())/float64(b.N), "wake-ms")
}
