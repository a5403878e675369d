//go:build linux

package hostile

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/testenv"
)

// fakeStats is what test/hostile/probe's fake-devtools counted.
type fakeStats struct {
	Conns            int64 `json:"conns"`
	MessagesTried    int64 `json:"messages_tried"`
	MessagesComplete int64 `json:"messages_complete"`
	BytesTried       int64 `json:"bytes_tried"`
	BytesWritten     int64 `json:"bytes_written"`
}

// procKiB reads a "VmX:  N kB" field of this process's status.
func procKiB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// TestBrowserHostileDevTools (issue 14 item 8, memory exhaustion by a
// hostile peer): the root of three sandboxes of one tenant replaces
// Chromium with a fake that answers DevTools with 90 MiB messages; the
// server (in this process: testenv) then drives those browsers. The peak
// RSS of this process (VmHWM, reset through clear_refs) must stay under
// a bound, while another tenant's sandbox still navigates a page. The
// positive control is the same attack against the old bounds (one
// 96 MiB message cap, nothing else): the fakes' messages are read whole
// and the RSS grows by hundreds of MiB.
func TestBrowserHostileDevTools(t *testing.T) {
	requireChromium(t)
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS (clear_refs): %v", err)
	}
	const mib = 90
	for _, tc := range []struct {
		name    string
		o       browser.Options
		control bool
	}{
		{name: "control: old bounds", control: true,
			o: browser.Options{MaxCDPMessage: 96 << 20, MaxCDPCapture: 96 << 20, MaxCDPEventRate: -1, CDPBudget: -1}},
		{name: "bounded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, testenv.Options{Browser: tc.o})
			_, bin := probeBinary(t)
			ck := e.tenantKey("hostile-browser", client.Quotas{})
			ca := e.as(ck.Key)
			vk := e.tenantKey("victim-browser", client.Quotas{})
			cv := e.as(vk.Key)
			victim, err := cv.Create(ctxT(t, time.Minute), client.Spec{Browser: true, TimeoutS: 900})
			if err != nil {
				t.Fatal(err)
			}
			navigate := func(want string) {
				t.Helper()
				p, err := cv.BrowserNavigate(ctxT(t, 2*time.Minute), victim.ID, client.NavigateRequest{
					URL: "data:text/html,<title>" + want + "</title>victim", TimeoutMs: 60000})
				if err != nil || p.Title != want {
					t.Fatalf("the victim's browser does not navigate: %+v %v", p, err)
				}
			}
			navigate("before")
			var ids []string
			wrapper := "#!/bin/sh\nexec " + probePath + " fake-devtools --fake-mib=" + strconv.Itoa(mib) + " \"$@\"\n"
			for range 3 {
				sb, err := ca.Create(ctxT(t, time.Minute), client.Spec{TimeoutS: 900, MemoryMB: 512})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range []struct {
					path string
					body []byte
				}{{probePath, bin}, {browser.DefaultChromium, []byte(wrapper)}} {
					// The sandbox's root replaces the binary the guest starts.
					if _, err := ca.WriteFile(ctxT(t, time.Minute), sb.ID, client.WriteRequest{Path: f.path, Mode: "0755"},
						bytes.NewReader(f.body), int64(len(f.body))); err != nil {
						t.Fatalf("write %s: %v", f.path, err)
					}
				}
				ids = append(ids, sb.ID)
			}
			debug.FreeOSMemory()
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				t.Fatal(err)
			}
			base := procKiB(t, "VmRSS")
			stats := func(id string) fakeStats {
				t.Helper()
				res, err := ca.Exec(ctxT(t, time.Minute), id, client.ExecRequest{User: "user", Cmd: []string{"cat", browser.DefaultProfileDir + "/fake-devtools.json"}})
				var st fakeStats
				if err != nil || json.Unmarshal([]byte(res.Stdout), &st) != nil {
					t.Errorf("the fake browser of %s kept no counts: %+v %v", id, res, err)
				}
				return st
			}
			// Each hostile browser is driven until its fake got one whole
			// message's worth of bytes into its socket (on a loaded host
			// the server's attach timeout can end a read sooner), at most
			// 6 navigations.
			var wg sync.WaitGroup
			errsSeen := make([]error, len(ids))
			for i, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; n < 6 && (n < 2 || stats(id).BytesWritten < mib<<20); n++ {
						_, errsSeen[i] = ca.BrowserNavigate(ctxT(t, 3*time.Minute), id, client.NavigateRequest{URL: "about:blank", TimeoutMs: 60000})
					}
				}()
			}
			wg.Wait()
			growth := (procKiB(t, "VmHWM") - base) >> 10
			var tried, complete, written int64
			for _, id := range ids {
				st := stats(id)
				t.Logf("%s: fake browser %+v", id, st)
				tried += st.MessagesTried
				complete += st.MessagesComplete
				written += st.BytesWritten
			}
			t.Logf("peak RSS growth %d MiB; the fakes tried %d messages of %d MiB, completed %d, wrote %d MiB; navigate errors %v",
				growth, tried, mib, complete, written>>20, errsSeen)
			// The fakes really sent their 90 MiB messages, in both runs.
			if tried < int64(len(ids)) {
				t.Fatalf("positive control: the fake browsers sent %d messages; the attack did not happen", tried)
			}
			if tc.control {
				// (The reads are slow enough here that chromedp's attach
				// timeout often ends them before a message is whole.)
				if growth < 200 {
					t.Fatalf("positive control: with the old bounds the server's peak RSS grew by only %d MiB (want >= 200 MiB)", growth)
				}
				return
			}
			const bound = 128
			if growth > bound {
				t.Fatalf("three hostile browsers raised the server's peak RSS by %d MiB (bound %d MiB)", growth, bound)
			}
			for i, err := range errsSeen {
				if err == nil || !strings.Contains(err.Error(), "DevTools limit") {
					t.Errorf("navigating hostile browser %d: want a refusal naming the DevTools limit, got %v", i, err)
				}
			}
			navigate("after")
			e.stillServes()
			e.audited("the refused navigation", audit.Query{Sandbox: ids[0], Action: "browser.navigate"}, func(r audit.Record) bool {
				return r.Phase == audit.PhaseResult && strings.Contains(r.Error, "DevTools limit")
			})
		})
	}
}
