//go:build linux

package hostile

// Faults: kill -9 of a real server under load and a restart; a full disk
// under the data directory; an audit log that cannot be written.
//
// PADDOCK_FAULT_SANDBOXES (default 40) and PADDOCK_FAULT_SECONDS (default
// 5: how long the load runs before the kill) size the kill test.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

// leftovers lists what this server's sandboxes hold on the machine, each
// line naming the sandbox id where it can: cgroup directories, run
// directories, writable layers, mounts under the data directory, guest
// processes, the namespaces they hold, and (with networking) interfaces.
func (s *server) leftovers() []string {
	var out []string
	for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct", "freezer", "unified"} {
		ents, _ := os.ReadDir(filepath.Join("/sys/fs/cgroup", ctrl, s.prefix))
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, "cgroup "+ctrl+"/"+e.Name())
			}
		}
	}
	for _, d := range []string{"run/sandboxes", "layers"} {
		ents, _ := os.ReadDir(filepath.Join(s.data, d))
		for _, e := range ents {
			if e.IsDir() && strings.HasPrefix(e.Name(), "sb-") {
				out = append(out, d+" "+e.Name())
			}
		}
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], filepath.Join(s.data, "layers")+"/") {
			out = append(out, "mount "+f[4])
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.Index(line, "/"+s.prefix+"/"); i >= 0 && strings.Contains(line, ":pids:") {
				id, _, _ := strings.Cut(line[i+len(s.prefix)+2:], "/")
				pid := filepath.Base(filepath.Dir(p))
				ns, _ := filepath.Glob("/proc/" + pid + "/ns/*")
				out = append(out, fmt.Sprintf("process %s of %s (holding %d namespace links)", pid, id, len(ns)))
			}
		}
	}
	if s.ns != nil {
		links, _ := s.ns.Handle().LinkList()
		for _, l := range links {
			if n := l.Attrs().Name; strings.HasPrefix(n, "pdk") || strings.HasPrefix(n, "pk") { // fixed names, an instance's
				out = append(out, "veth "+l.Attrs().Name)
			}
		}
	}
	return out
}

// nftState counts the rules and set elements of the server's nftables
// table (in its namespace): per-sandbox state would show here.
func (s *server) nftState() (rules, elements int) {
	s.t.Helper()
	c, err := nftables.New(nftables.WithNetNSFd(s.ns.FD))
	if err != nil {
		s.t.Fatal(err)
	}
	tables, err := c.ListTables()
	if err != nil {
		s.t.Fatal(err)
	}
	chains, _ := c.ListChains()
	for _, tb := range tables {
		if tb.Name != "paddock" && !strings.HasPrefix(tb.Name, "paddock-") { // fixed names, an instance's
			continue
		}
		for _, ch := range chains {
			if ch.Table.Name == tb.Name && ch.Table.Family == tb.Family {
				r, _ := c.GetRules(tb, ch)
				rules += len(r)
			}
		}
		sets, _ := c.GetSets(tb)
		for _, st := range sets {
			el, _ := c.GetSetElements(st)
			elements += len(el)
		}
	}
	return rules, elements
}

// kill -9 of the server in the middle of a load of execs, creates and
// deletes; a restart: every sandbox listed works, nothing unlisted runs,
// and once all are deleted nothing is left; the audit log verifies.
func TestFaultKill9UnderLoad(t *testing.T) {
	n := envInt("PADDOCK_FAULT_SANDBOXES", 40)
	seconds := envInt("PADDOCK_FAULT_SECONDS", 5)
	s := startServer(t, serverOptions{network: true})
	baseRules, baseElems := s.nftState()
	if baseRules == 0 {
		t.Fatal("positive control: a running server's nftables table shows no rules")
	}
	ctx := context.Background()
	var ids []string
	networked := 0
	for i := 0; i < n; i++ {
		spec := client.Spec{Labels: map[string]string{"fault": strconv.Itoa(i)}}
		if i%4 == 0 { // some with an interface: veths to clean up
			spec.Network = &client.Network{Mode: "allowlist", Allow: []string{"example.com"}}
			networked++
		}
		ids = append(ids, s.create(spec))
	}
	s.stillServes(ids[0])
	// Positive control of the leak checks: they see what sandboxes hold.
	held := s.leftovers()
	veths := 0
	for _, l := range held {
		if strings.HasPrefix(l, "veth ") {
			veths++
		}
	}
	// At least one veth per networked sandbox: the backend also keeps a
	// few made ahead (docs/network.md, "Made ahead").
	if veths < networked || len(held) < n {
		t.Fatalf("positive control: the leak check sees %d items (%d veths for %d networked sandboxes)", len(held), veths, networked)
	}
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"true"}}); err == nil {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}(id)
	}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if sb, err := s.c.Create(ctx, client.Spec{Labels: map[string]string{"churn": "1"}}); err == nil {
					_ = s.c.Delete(ctx, sb.ID)
				}
			}
		}()
	}
	time.Sleep(time.Duration(seconds) * time.Second)
	errsBefore := failed.Load()
	s.kill9()
	close(stop)
	wg.Wait()
	t.Logf("before the kill: %d execs, %d errors; sandboxes outlive the server: %d items held", ok.Load(), errsBefore, len(s.leftovers()))
	if errsBefore > 0 {
		t.Errorf("%d errors under load before the kill", errsBefore)
	}
	if code, out := s.verify(); code != 0 {
		t.Fatalf("after kill -9 the audit log does not verify:\n%s", out)
	}

	s.start()
	t.Logf("restart: the server answered %v after it was started", s.ready.Round(time.Millisecond))
	list, err := s.c.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, sb := range list {
		listed[sb.ID] = true
		s.stillServes(sb.ID) // every sandbox listed is usable
	}
	for _, id := range ids {
		if !listed[id] {
			t.Errorf("sandbox %s (alive before the kill) is not listed after the restart", id)
		}
	}
	for _, l := range s.leftovers() {
		if strings.HasPrefix(l, "veth ") {
			continue // named by slot, counted below
		}
		if !mentionsAny(l, listed) {
			t.Errorf("after the restart, something of an unlisted sandbox: %s", l)
		}
	}
	for _, sb := range list {
		if err := s.c.Delete(ctx, sb.ID); err != nil {
			t.Fatal(err)
		}
	}
	s.stop()
	if l := s.leftovers(); len(l) > 0 {
		t.Errorf("leaks after deleting everything:\n%s", strings.Join(l, "\n"))
	}
	// A server stopping with no sandbox attached removes its table (a
	// fresh server's rules, counted above, show the count works).
	if rules, elems := s.nftState(); rules != 0 || elems != 0 {
		t.Errorf("nftables: %d rules and %d set elements left after the last sandbox and the server stopped (a fresh server had %d and %d)", rules, elems, baseRules, baseElems)
	}
	if code, out := s.verify(); code != 0 {
		t.Fatalf("the audit log does not verify:\n%s", out)
	} else {
		t.Logf("audit verify: %s", strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	}
}

func mentionsAny(s string, ids map[string]bool) bool {
	for id := range ids {
		if strings.Contains(s, id) {
			return true
		}
	}
	return false
}

// mountTmpfs mounts a tmpfs of size bytes at dir until the test ends.
func mountTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
}

// fill writes a file until the filesystem is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	small := make([]byte, 4096)
	for {
		if _, err := f.Write(small); err != nil {
			break
		}
	}
	return p
}

// refusedSoon repeats an action (attempt i) until it is refused — the
// last page a file already has may still take a few small records — and
// asserts the refusal is clear: 503 or 507 with a message. It returns the
// attempt that was refused.
func refusedSoon(t *testing.T, what string, act func(i int) error) int {
	t.Helper()
	for i := 0; i < 200; i++ {
		err := act(i)
		if err == nil {
			continue
		}
		var ce *client.Error
		if !errors.As(err, &ce) || (ce.Status != 503 && ce.Status != 507) || ce.Message == "" {
			t.Fatalf("%s on a full disk: want a 503/507 with a message, got %v", what, err)
		}
		t.Logf("%s on a full disk: refused at attempt %d: %d %s %q", what, i+1, ce.Status, ce.Code, ce.Message)
		return i
	}
	t.Fatalf("%s: never refused on a full disk", what)
	return 0
}

// The data directory's filesystem fills up: creates and execs are refused
// with a clear error, nothing is corrupted — once space is back everything
// works, the database opens and the audit log verifies.
func TestFaultFullDataDisk(t *testing.T) {
	dir, err := os.MkdirTemp("", "pdkfull")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	mountTmpfs(t, data, 256<<20)
	s := startServer(t, serverOptions{data: data})
	ctx := context.Background()
	id := s.create(client.Spec{})
	s.stillServes(id) // control: it works with space
	filler := fill(t, data)
	t.Cleanup(func() { os.Remove(filler) })
	var made []string
	refusedSoon(t, "create", func(int) error {
		sb, err := s.c.Create(ctx, client.Spec{})
		if err == nil {
			made = append(made, sb.ID)
		}
		return err
	})
	refused := refusedSoon(t, "exec", func(i int) error {
		_, err := s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"touch", fmt.Sprintf("/workspace/attempt-%d", i)}})
		return err
	})
	// Every API request is audited (fail closed): even a list is refused
	// while nothing can be recorded — clearly.
	if _, err := s.c.List(ctx, nil); err != nil {
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 503 || ce.Message == "" {
			t.Fatalf("listing on a full disk: %v", err)
		}
	}
	os.Remove(filler)
	s.stillServes(id)
	if res, _ := s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"ls", fmt.Sprintf("/workspace/attempt-%d", refused)}}); res.ExitCode == 0 {
		t.Error("the refused exec ran")
	}
	for _, m := range made {
		_ = s.c.Delete(ctx, m)
	}
	id2 := s.create(client.Spec{})
	s.stop()
	if code, out := s.verify(); code != 0 {
		t.Fatalf("after a full disk the audit log does not verify:\n%s", out)
	}
	s.start() // the database opens
	list, err := s.c.List(ctx, nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("after a full disk and a restart: %v %v (want %s and %s)", list, err, id, id2)
	}
	s.stillServes(id, id2)
}

// The audit log's filesystem fills while the server runs: actions are
// refused (503, "the audit log cannot be written"), none happens; once
// space is back work resumes and the gap is recorded. A log that cannot be
// opened for writing at all stops the server at start with a message.
func TestFaultAuditUnwritable(t *testing.T) {
	dir, err := os.MkdirTemp("", "pdkaud")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	mountTmpfs(t, filepath.Join(data, "audit"), 4<<20)
	s := startServer(t, serverOptions{data: data})
	ctx := context.Background()
	id := s.create(client.Spec{})
	s.stillServes(id)
	filler := fill(t, s.auditDir())
	t.Cleanup(func() { os.Remove(filler) })
	var last error
	refused := refusedSoon(t, "exec with the audit log full", func(i int) error {
		_, last = s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"touch", fmt.Sprintf("/workspace/unaudited-%d", i)}})
		return last
	})
	var ce *client.Error
	if !errors.As(last, &ce) || ce.Status != 503 || !strings.Contains(ce.Message, "audit") {
		t.Fatalf("exec with the audit log full: want 503 naming the audit log, got %v", last)
	}
	os.Remove(filler)
	s.stillServes(id)
	if res, _ := s.c.Exec(ctx, id, client.ExecRequest{Cmd: []string{"ls", fmt.Sprintf("/workspace/unaudited-%d", refused)}}); res.ExitCode == 0 {
		t.Error("the exec refused for want of an audit record ran")
	}
	s.stop()
	if code, out := s.verify(); code != 0 {
		t.Fatalf("the audit log does not verify:\n%s", out)
	}
	recs := readAll(t, s.auditDir())
	if !strings.Contains(string(recs), `"action":"`+audit.ActionGap+`"`) {
		t.Error("the refused records are not accounted for by an audit.gap record")
	}
	// Read-only: the server refuses to start, saying why.
	if err := unix.Mount("", s.auditDir(), "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	out, code := s.startFails()
	t.Logf("start with a read-only audit log: exit %d: %s", code, lastLines(out, 3))
	if code == 0 || !strings.Contains(strings.ToLower(out), "audit") {
		t.Fatalf("a server with a read-only audit log: want a refusal to start naming the audit log, got exit %d:\n%s", code, out)
	}
	if err := unix.Mount("", s.auditDir(), "", unix.MS_REMOUNT, "size=4m"); err != nil {
		t.Fatal(err)
	}
	s.start()
	s.stillServes(id)
	s.stop()
	if code, out := s.verify(); code != 0 {
		t.Fatalf("the audit log does not verify:\n%s", out)
	}
}

// startFails runs the server expecting it to exit at once; it returns the
// output and the exit code.
func (s *server) startFails() (string, int) {
	s.t.Helper()
	cmd := exec.Command(s.bin, "serve", "--data", s.data, "--listen", s.addr, "--pool", "0", "--cgroup-prefix", s.prefix,
		"--uid-base", strconv.Itoa(s.o.uidBase), "--no-network")
	cmd.Env = append(os.Environ(), "PADDOCK_ADMIN_KEY="+s.key)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return string(out), 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
