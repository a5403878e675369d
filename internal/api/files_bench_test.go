package api_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// The files benchmarks run the whole path — HTTP client, REST server,
// manager, guest client, Unix socket, guest agent, the sandbox's
// (RAM-backed) disk — on loopback, all but the guest in this process, so
// the memory they report is the client's and the server's together.

const gib = 1 << 30

// memPeak samples this process's Go heap and RSS while a transfer runs.
type memPeak struct {
	stop            chan struct{}
	done            sync.WaitGroup
	heap, rss       atomic.Uint64
	baseHeap, baseR uint64
}

func startMemPeak() *memPeak {
	runtime.GC()
	m := &memPeak{stop: make(chan struct{})}
	m.baseHeap, m.baseR = heapInuse(), rss()
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				if h := heapInuse(); h > m.heap.Load() {
					m.heap.Store(h)
				}
				if r := rss(); r > m.rss.Load() {
					m.rss.Store(r)
				}
			}
		}
	}()
	return m
}

// report records the peaks above the starting point, in MiB.
func (m *memPeak) report(b *testing.B) {
	close(m.stop)
	m.done.Wait()
	b.ReportMetric(float64(m.heap.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric((float64(m.rss.Load())-float64(m.baseR))/(1<<20), "rss-growth-MiB")
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rss reads VmRSS from /proc/self/status, in bytes.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func bigSandbox(b *testing.B) (*testenv.Env, string) {
	e := testenv.New(b, testenv.Options{})
	sb := e.Create(sandbox.Spec{DiskMB: 2048, MemoryMB: 1024})
	return e, sb.ID
}

// BenchmarkFilesUpload1GiB: PUT of 1 GiB through REST into the sandbox.
func BenchmarkFilesUpload1GiB(b *testing.B) {
	e, id := bigSandbox(b)
	ctx := context.Background()
	b.SetBytes(gib)
	m := startMemPeak()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Client.WriteFile(ctx, id, client.WriteRequest{Path: "big"}, io.LimitReader(zeroReader{}, gib), gib); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := e.Client.RemoveFile(ctx, id, client.RemoveRequest{Path: "big"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	m.report(b)
}

// BenchmarkFilesDownload1GiB: GET of a 1 GiB file through REST.
func BenchmarkFilesDownload1GiB(b *testing.B) {
	e, id := bigSandbox(b)
	ctx := context.Background()
	if _, err := e.Client.WriteFile(ctx, id, client.WriteRequest{Path: "big"}, io.LimitReader(zeroReader{}, gib), gib); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(gib)
	m := startMemPeak()
	buf := make([]byte, 1<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := e.Client.OpenFile(ctx, id, client.ReadFileRequest{Path: "big"})
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f.Body}, buf)
		f.Body.Close()
		if err != nil || n != gib {
			b.Fatalf("read %d bytes: %v", n, err)
		}
	}
	b.StopTimer()
	m.report(b)
}

// BenchmarkFilesList10k: list of a directory of 10,000 entries.
func BenchmarkFilesList10k(b *testing.B) {
	e := testenv.New(b, testenv.Options{})
	id := e.Create(sandbox.Spec{}).ID
	if res := e.Sh(id, "mkdir /workspace/many && cd /workspace/many && seq 10000 | xargs touch"); res.ExitCode != 0 {
		b.Fatalf("setup: %s", res.Stderr)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := e.Client.ListFiles(ctx, id, client.ListRequest{Path: "/workspace/many"})
		if err != nil || len(res.Entries) != 10000 || res.Truncated {
			b.Fatalf("list: %d entries, truncated %v, %v", len(res.Entries), res.Truncated, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/list")
}

// BenchmarkFilesList10kHTTP: the same list as raw HTTP (the answer read,
// not decoded): the server's part of the latency.
func BenchmarkFilesList10kHTTP(b *testing.B) {
	e := testenv.New(b, testenv.Options{})
	id := e.Create(sandbox.Spec{}).ID
	if res := e.Sh(id, "mkdir /workspace/many && cd /workspace/many && seq 10000 | xargs touch"); res.ExitCode != 0 {
		b.Fatalf("setup: %s", res.Stderr)
	}
	url := e.Server.URL + "/v1/sandboxes/" + id + "/files/list?path=/workspace/many"
	buf := make([]byte, 4<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+e.AdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.ReadFull(resp.Body, buf)
		resp.Body.Close()
		if resp.StatusCode != 200 || n < 10000*100 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/list")
}
