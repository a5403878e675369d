//go:build linux

package browser_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// The browser's memory is the sandbox's (docs/browser.md): every Chromium
// process — browser, zygotes, renderers, utilities — sits in the
// sandbox's memory cgroup, so the sandbox's usage (GET …/stats, what its
// limit counts) grows by what Chromium takes. The processes are found
// without looking at cgroups (by a marker on the browser's command line,
// then by its PID namespace), so the cgroup check is not circular.
func TestBrowserMemoryCounted(t *testing.T) {
	var mb [8]byte
	_, _ = rand.Read(mb[:])
	marker := "--paddock-test-marker=" + hex.EncodeToString(mb[:])
	e := newEnv(t, browser.Options{ExtraArgs: []string{marker}})
	sb := e.Create(sandbox.Spec{MemoryMB: 1024, Pids: 1024, TimeoutS: 600,
		Network: &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"site.test"}}})
	sc, id := e.Scope, sb.ID

	usage := func(what string) int64 {
		t.Helper()
		time.Sleep(500 * time.Millisecond)   // let it settle
		st, err := e.Client.Stats(e.ctx, id) // the REST route users read
		if err != nil {
			t.Fatalf("stats %s: %v", what, err)
		}
		if st.MemoryBytes <= 0 {
			t.Fatalf("stats %s: no memory_bytes in %+v", what, st)
		}
		return st.MemoryBytes
	}
	before := usage("before the browser")
	if ps := pidsWith(t, marker); len(ps) != 0 {
		t.Fatalf("a browser with the marker runs before any action: %v", ps)
	}

	must[wire.Page](t, "navigate")(e.svc.Navigate(e.ctx, sc, id, wire.NavigateRequest{URL: "http://site.test/article"}))
	after := usage("with the browser")
	st := must[wire.Status](t, "status")(e.svc.Status(e.ctx, sc, id))

	// The browser process: the one with the marker (its children do not
	// carry unknown switches).
	mains := pidsWith(t, marker)
	if len(mains) != 1 {
		t.Fatalf("want one browser process with the marker, found %v", mains)
	}
	main := mains[0]
	if nspid := nsPids(t, main); len(nspid) < 2 || nspid[len(nspid)-1] != st.Pid {
		t.Errorf("the marked process (host pid %d, NSpid %v) is not the browser the status names (pid %d in the sandbox)", main, nspid, st.Pid)
	}
	ns := readLink(t, main, "ns/pid")
	own := readLink(t, os.Getpid(), "ns/pid")
	if ns == own {
		t.Fatalf("the browser shares the test's PID namespace (%s): it is not in the sandbox", ns)
	}

	// Every Chromium process in the browser's PID namespace.
	var chromium []int
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		pns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
		if err != nil || pns != ns {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && filepath.Base(exe) == "chromium" {
			chromium = append(chromium, pid)
		}
	}
	// The browser, its zygotes and at least one renderer (a page is loaded).
	if len(chromium) < 3 {
		t.Fatalf("found %d Chromium processes in the sandbox's PID namespace (%v), want the browser, zygotes and a renderer", len(chromium), chromium)
	}

	// The sandbox's memory cgroup, as the host sees it.
	want := "/" + e.Prefix + "/" + id
	under := func(p string) bool { return p == want || strings.HasPrefix(p, want+"/") }
	// Positive control: the check tells a process outside the sandbox
	// apart (the test itself).
	if p := memCgroup(t, os.Getpid()); under(p) {
		t.Fatalf("control: the test process is in %s, under the sandbox's group %s", p, want)
	}
	for _, pid := range chromium {
		p := memCgroup(t, pid)
		if !under(p) {
			t.Errorf("Chromium process %d (%s) is in memory cgroup %s, not under the sandbox's %s", pid, cmdline(pid), p, want)
		}
	}

	grew := after - before
	t.Logf("sandbox memory cgroup: %.1f MiB before the browser, %.1f MiB with it and one page (+%.1f MiB); %d Chromium processes, all under %s",
		mib(before), mib(after), mib(grew), len(chromium), want)
	if grew < 32<<20 {
		t.Errorf("the sandbox's memory grew by %.1f MiB once Chromium ran (%.1f -> %.1f MiB), want tens of MiB", mib(grew), mib(before), mib(after))
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// pidsWith lists the host processes whose command line holds arg.
func pidsWith(t *testing.T, arg string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// nsPids is the NSpid line of pid: its pid in each PID namespace, the
// host's first.
func nsPids(t *testing.T, pid int) []int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			var out []int
			for _, f := range strings.Fields(rest) {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("NSpid of %d: %q", pid, line)
				}
				out = append(out, n)
			}
			return out
		}
	}
	t.Fatalf("no NSpid line for %d", pid)
	return nil
}

func readLink(t *testing.T, pid int, name string) string {
	t.Helper()
	s, err := os.Readlink(fmt.Sprintf("/proc/%d/%s", pid, name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// memCgroup is pid's memory cgroup (v1 memory controller, or v2's
// unified group) as the host sees it.
func memCgroup(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	unified := ""
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				return f[2]
			}
		}
		if f[0] == "0" && f[1] == "" {
			unified = f[2]
		}
	}
	if unified == "" {
		t.Fatalf("no memory cgroup for %d in %q", pid, b)
	}
	return unified
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	s := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
