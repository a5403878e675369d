package processes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

const gig = 1 << 30

// rssMB reads this process's resident set (the server runs in-process).
func rssMB(tb testing.TB) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}

// rssWatch samples RSS until stopped and keeps the peak.
type rssWatch struct {
	mu   sync.Mutex
	peak float64
	stop chan struct{}
	done chan struct{}
}

func watchRSS(tb testing.TB) *rssWatch {
	w := &rssWatch{peak: rssMB(tb), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				v := rssMB(tb)
				w.mu.Lock()
				if v > w.peak {
					w.peak = v
				}
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *rssWatch) end() float64 {
	close(w.stop)
	<-w.done
	return w.peak
}

// report records the RSS numbers and fails past the ±50 MB budget.
func report(b *testing.B, before, peak, after float64, wireBytes int64, took time.Duration) {
	b.ReportMetric(before, "rss_before_MB")
	b.ReportMetric(peak, "rss_peak_MB")
	b.ReportMetric(after, "rss_after_MB")
	b.ReportMetric(float64(wireBytes)/(1<<20)/took.Seconds(), "wire_MB/s")
	if peak-before > 50 || after-before > 50 {
		b.Errorf("RSS grew by %.1f MB (peak) / %.1f MB (after), budget 50 MB", peak-before, after-before)
	}
}

func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// 1 GiB of `yes` from a background process, followed by a client over the
// NDJSON output stream. The process never waits for the client: what the
// client is too slow for is dropped from the ring buffer and reported.
func BenchmarkProcessOutputRSS(b *testing.B) {
	e := testenv.New(b, testenv.Options{})
	sb := e.Create(sandbox.Spec{MemoryMB: 1024})
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		settle()
		before := rssMB(b)
		w := watchRSS(b)
		start := time.Now()
		info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sh", "-c", "yes | head -c " + strconv.Itoa(gig)}})
		if err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequest("GET", e.Server.URL+"/v1/sandboxes/"+sb.ID+"/processes/"+info.ID+"/output?follow=1", nil)
		req.Header.Set("Authorization", "Bearer "+e.AdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("output: %v %v", err, resp)
		}
		var wire, dropped int64
		var final *client.ProcessInfo
		br := bufio.NewReaderSize(resp.Body, 1<<20)
		for {
			line, err := br.ReadSlice('\n')
			wire += int64(len(line))
			if err == bufio.ErrBufferFull {
				for err == bufio.ErrBufferFull {
					var more []byte
					more, err = br.ReadSlice('\n')
					wire += int64(len(more))
				}
				continue // a long data line
			}
			if err != nil {
				break
			}
			head := line[:min(len(line), 64)]
			switch {
			case bytes.Contains(head, []byte(`"data`)):
			case bytes.HasPrefix(line, []byte(`{"process"`)):
				var l struct {
					Process client.ProcessInfo `json:"process"`
				}
				if json.Unmarshal(line, &l) == nil {
					final = &l.Process
				}
			default:
				var l struct {
					Dropped int64 `json:"dropped"`
				}
				if json.Unmarshal(line, &l) == nil {
					dropped += l.Dropped
				}
			}
		}
		resp.Body.Close()
		took := time.Since(start)
		peak := w.end()
		settle()
		after := rssMB(b)
		if final == nil || final.State != "exited" {
			b.Fatalf("stream ended without the exit: %+v", final)
		}
		written := final.Streams["stdout"].Written
		if written != gig {
			b.Fatalf("process wrote %d bytes, want %d", written, gig)
		}
		b.ReportMetric(float64(written-dropped)/(1<<20), "received_MB")
		b.ReportMetric(float64(dropped)/(1<<20), "dropped_MB")
		report(b, before, peak, after, wire, took)
	}
}

// The same gigabyte through a plain streaming exec (NDJSON), which applies
// backpressure instead of dropping.
func BenchmarkExecNDJSONRSS(b *testing.B) {
	e := testenv.New(b, testenv.Options{})
	sb := e.Create(sandbox.Spec{MemoryMB: 1024})
	for i := 0; i < b.N; i++ {
		settle()
		before := rssMB(b)
		w := watchRSS(b)
		start := time.Now()
		body := `{"cmd":["sh","-c","yes | head -c ` + strconv.Itoa(gig) + `"]}`
		req, _ := http.NewRequest("POST", e.Server.URL+"/v1/sandboxes/"+sb.ID+"/exec", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.AdminKey)
		req.Header.Set("Accept", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("exec: %v %v", err, resp)
		}
		// The last line is the result; everything before it is output.
		cw := &tailWriter{}
		wire, err := io.Copy(cw, resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		peak := w.end()
		settle()
		after := rssMB(b)
		var res client.ExecResult
		if line := cw.lastLine(); json.Unmarshal(line, &res) != nil || res.StdoutBytes != gig {
			b.Fatalf("last line %q is not the result of a 1 GiB exec", line[:min(len(line), 200)])
		}
		report(b, before, peak, after, wire, took)
	}
}

// tailWriter discards everything but the last few KiB.
type tailWriter struct{ keep []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.keep = append(t.keep, p...)
	if len(t.keep) > 8192 {
		t.keep = append(t.keep[:0], t.keep[len(t.keep)-8192:]...)
	}
	return len(p), nil
}

// lastLine is the final NDJSON line seen.
func (t *tailWriter) lastLine() []byte {
	b := bytes.TrimSpace(t.keep)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return b
}
