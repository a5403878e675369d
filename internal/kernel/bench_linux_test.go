//go:build linux

package kernel

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// BenchmarkRoundTrip is one small cell on a warm context, start event to
// end event (the kernel alone answers Python's 1+1 in 5-7 ms here).
func BenchmarkRoundTrip(b *testing.B) {
	for _, c := range []struct {
		lang, code string
		need       func(testing.TB)
	}{
		{"python", "1+1", needPython},
		{"javascript", "1+1", needNode},
		{"bash", "echo 2", needBash},
	} {
		b.Run(c.lang, func(b *testing.B) {
			c.need(b)
			s := newSup(b, nil)
			id := newCtx(b, s, c.lang)
			req := codewire.ExecuteRequest{Context: id, Code: c.code}
			mustOK(b, s, req)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if err := s.Execute(context.Background(), req, func(codewire.Event) error { return nil }); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkKernelStart is a context's creation, its kernel ready for a
// cell (the issue asks for at most 1 s).
func BenchmarkKernelStart(b *testing.B) {
	for _, c := range []struct {
		lang string
		need func(testing.TB)
	}{{"python", needPython}, {"javascript", needNode}, {"bash", needBash}} {
		b.Run(c.lang, func(b *testing.B) {
			c.need(b)
			s := newSup(b, func(cfg *Config) { cfg.Limits.MaxContexts = 1 << 20 })
			lat := make([]time.Duration, 0, b.N)
			var cpu time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				ctx, err := s.Create(context.Background(), codewire.CreateContextRequest{Language: c.lang})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				b.StopTimer()
				cpu += cpuOf(b, s, ctx.ID)
				_ = s.Delete(context.Background(), ctx.ID)
				b.StartTimer()
			}
			b.StopTimer()
			reportPercentiles(b, lat)
			// CPU the kernel used to get ready: what the start costs on an
			// idle machine, whatever the load of this one.
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
		})
	}
}

// cpuOf is the user+system CPU time a context's kernel process has used.
func cpuOf(b *testing.B, s *Supervisor, id string) time.Duration {
	s.mu.Lock()
	k := s.contexts[id]
	s.mu.Unlock()
	k.mu.Lock()
	pid := k.eng.(interface{ pid() int }).pid()
	k.mu.Unlock()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in parens.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// BenchmarkIdleMemory reports what an idle context's kernel process
// occupies: PSS (its share of shared pages) and RSS, in MiB.
func BenchmarkIdleMemory(b *testing.B) {
	for _, c := range []struct {
		lang, warm string
		need       func(testing.TB)
	}{
		{"python", "1+1", needPython},
		{"python-data", "import pandas, numpy, matplotlib.pyplot", needPythonData},
		{"javascript", "1+1", needNode},
		{"bash", "true", needBash},
	} {
		b.Run(c.lang, func(b *testing.B) {
			c.need(b)
			lang, _, _ := strings.Cut(c.lang, "-")
			var pss, rss float64
			for range b.N {
				s := newSup(b, nil)
				id := newCtx(b, s, lang)
				mustOK(b, s, codewire.ExecuteRequest{Context: id, Code: c.warm})
				time.Sleep(200 * time.Millisecond)
				s.mu.Lock()
				k := s.contexts[id]
				s.mu.Unlock()
				k.mu.Lock()
				pid := k.eng.(interface{ pid() int }).pid()
				k.mu.Unlock()
				pss, rss = memOf(b, pid, "Pss:"), memOf(b, pid, "Rss:")
				s.Close()
			}
			b.ReportMetric(pss, "PSS-MiB")
			b.ReportMetric(rss, "RSS-MiB")
		})
	}
}

func memOf(b *testing.B, pid int, field string) float64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	b.Fatalf("no %s for pid %d", field, pid)
	return 0
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sortDurations(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[(len(lat)*99)/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

func sortDurations(d []time.Duration) {
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[j] < d[j-1]; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}
