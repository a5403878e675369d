package processes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// collect reads a process's output into per-stream buffers, checking that
// offsets are contiguous, and returns the final state and dropped counts.
type collected struct {
	out     map[string]*bytes.Buffer
	next    map[string]int64
	dropped map[string]int64
	info    client.ProcessInfo
}

func collect(t *testing.T, c *client.Client, id string, ref client.ProcessRef, opt client.OutputOptions) collected {
	t.Helper()
	col := collected{out: map[string]*bytes.Buffer{}, next: map[string]int64{}, dropped: map[string]int64{}}
	info, err := c.ProcessOutput(context.Background(), id, ref, opt, func(ev client.OutputEvent) error {
		if len(ev.Data) == 0 {
			col.next[ev.Stream] = ev.Offset
			col.dropped[ev.Stream] += ev.Dropped
			return nil
		}
		if ev.Offset != col.next[ev.Stream] {
			t.Errorf("%s: chunk at offset %d, want %d", ev.Stream, ev.Offset, col.next[ev.Stream])
		}
		col.next[ev.Stream] = ev.Offset + int64(len(ev.Data))
		if col.out[ev.Stream] == nil {
			col.out[ev.Stream] = &bytes.Buffer{}
		}
		col.out[ev.Stream].Write(ev.Data)
		return nil
	})
	if err != nil {
		t.Fatalf("output: %v", err)
	}
	col.info = info
	return col
}

func (c collected) text(stream string) string {
	if b := c.out[stream]; b != nil {
		return b.String()
	}
	return ""
}

func TestStartWaitOutput(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, Tag: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Pid <= 1 || info.ID == "" || info.State != "running" && info.State != "exited" {
		t.Fatalf("start: %+v", info)
	}
	w, err := e.Client.WaitProcess(ctx, sb.ID, client.PID(info.Pid), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if w.State != "exited" || w.ExitCode == nil || *w.ExitCode != 3 {
		t.Fatalf("wait: %+v", w)
	}
	col := collect(t, e.Client, sb.ID, client.Tag("t1"), client.OutputOptions{})
	if got := col.text("stdout"); got != "out\n" {
		t.Errorf("stdout %q", got)
	}
	if got := col.text("stderr"); got != "err\n" {
		t.Errorf("stderr %q", got)
	}
	list, err := e.Client.Processes(ctx, sb.ID)
	if err != nil || len(list) != 1 || list[0].ID != info.ID {
		t.Fatalf("list: %v %+v", err, list)
	}
	if !strings.Contains(strings.Join(list[0].Argv, " "), "echo out") {
		t.Errorf("argv %q", list[0].Argv)
	}
}

// errCode returns the API error code of err ("" if none).
func errCode(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestStdinRoundTrip(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sh", "-c", "while read l; do echo got:$l; done; echo eof; exit 4"}, Stdin: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := client.PID(info.Pid)
	for _, l := range []string{"one\n", "two\n"} {
		n, err := e.Client.WriteStdin(ctx, sb.ID, ref, strings.NewReader(l))
		if err != nil || n != int64(len(l)) {
			t.Fatalf("stdin: %d %v", n, err)
		}
	}
	if err := e.Client.CloseStdin(ctx, sb.ID, ref); err != nil {
		t.Fatal(err)
	}
	w, err := e.Client.WaitProcess(ctx, sb.ID, ref, 30*time.Second)
	if err != nil || w.ExitCode == nil || *w.ExitCode != 4 {
		t.Fatalf("wait: %v %+v", err, w)
	}
	if got := collect(t, e.Client, sb.ID, ref, client.OutputOptions{}).text("stdout"); got != "got:one\ngot:two\neof\n" {
		t.Fatalf("stdout %q", got)
	}
	// Closed input, and a process started without stdin, refuse input.
	if _, err := e.Client.WriteStdin(ctx, sb.ID, ref, strings.NewReader("x")); errCode(err) != "conflict" {
		t.Fatalf("stdin after close: %v", err)
	}
	q, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.WriteStdin(ctx, sb.ID, client.PID(q.Pid), strings.NewReader("x")); errCode(err) != "conflict" {
		t.Fatalf("stdin without stdin: %v", err)
	}
	// cat on /dev/null ends at once.
	if w, err := e.Client.WaitProcess(ctx, sb.ID, client.PID(q.Pid), 30*time.Second); err != nil || w.State != "exited" {
		t.Fatalf("cat without stdin: %v %+v", err, w)
	}
}

func TestSignal(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{
		Cmd: []string{"sh", "-c", `trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done`}})
	if err != nil {
		t.Fatal(err)
	}
	ref := client.ProcessRef(info.ID)
	waitOutput(t, e.Client, sb.ID, ref, "ready")
	if _, err := e.Client.SignalProcess(ctx, sb.ID, ref, "NOPE", false); errCode(err) != "invalid_argument" {
		t.Fatalf("unknown signal: %v", err)
	}
	n, err := e.Client.SignalProcess(ctx, sb.ID, ref, "term", false)
	if err != nil || n != 1 {
		t.Fatalf("signal: %d %v", n, err)
	}
	w, err := e.Client.WaitProcess(ctx, sb.ID, ref, 30*time.Second)
	if err != nil || w.ExitCode == nil || *w.ExitCode != 7 {
		t.Fatalf("wait: %v %+v", err, w)
	}
	if got := collect(t, e.Client, sb.ID, ref, client.OutputOptions{}).text("stdout"); got != "ready\ngot-term\n" {
		t.Fatalf("stdout %q", got)
	}
	// An exited process is not signalled (its pid may be another's now).
	if _, err := e.Client.SignalProcess(ctx, sb.ID, ref, "KILL", false); errCode(err) != "conflict" {
		t.Fatalf("signal after exit: %v", err)
	}
	// Killed by a signal: shell convention exit code and the signal name.
	k, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.SignalProcess(ctx, sb.ID, client.PID(k.Pid), "9", false); err != nil {
		t.Fatal(err)
	}
	w, err = e.Client.WaitProcess(ctx, sb.ID, client.PID(k.Pid), 30*time.Second)
	if err != nil || w.Signal != "SIGKILL" || w.ExitCode == nil || *w.ExitCode != 137 || w.OOMKilled {
		t.Fatalf("after SIGKILL: %v %+v", err, w)
	}
	// Unknown processes.
	if _, err := e.Client.Process(ctx, sb.ID, "p999"); errCode(err) != "not_found" {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := e.Client.Process(ctx, sb.ID, "../x"); errCode(err) != "invalid_argument" && errCode(err) != "not_found" {
		t.Fatalf("bad ref: %v", err)
	}
}

// waitOutput follows a process's stdout until it contains want.
func waitOutput(t *testing.T, c *client.Client, id string, ref client.ProcessRef, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var buf bytes.Buffer
	errFound := errors.New("found")
	_, err := c.ProcessOutput(ctx, id, ref, client.OutputOptions{Follow: true}, func(ev client.OutputEvent) error {
		buf.Write(ev.Data)
		if strings.Contains(buf.String(), want) {
			return errFound
		}
		return nil
	})
	if !errors.Is(err, errFound) {
		t.Fatalf("waiting for %q in the output: %v (got %q)", want, err, buf.String())
	}
}

// A background process outlives the client that streams it; a new client
// re-attaches and reads everything from the start, or resumes at an offset.
func TestSurvivesDisconnect(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{
		Cmd: []string{"sh", "-c", `i=0; while [ $i -lt 300 ]; do echo $i; i=$((i+1)); sleep 0.005; done`}, Tag: "counter"})
	if err != nil {
		t.Fatal(err)
	}
	// A first client follows, reads a little, and disconnects abruptly.
	cctx, cancel := context.WithCancel(ctx)
	var first bytes.Buffer
	var resume int64
	_, err = e.Client.ProcessOutput(cctx, sb.ID, client.Tag("counter"), client.OutputOptions{Follow: true}, func(ev client.OutputEvent) error {
		first.Write(ev.Data)
		resume = ev.Offset + int64(len(ev.Data))
		if strings.Count(first.String(), "\n") >= 10 {
			cancel()
		}
		return nil
	})
	if err == nil {
		t.Fatal("the stream ended by itself; want the disconnect")
	}
	if p, err := e.Client.Process(ctx, sb.ID, client.PID(info.Pid)); err != nil || p.State != "running" {
		t.Fatalf("after the disconnect: %v %+v", err, p)
	}
	// Re-attach from the start and follow to the end: every line is there.
	all := collect(t, e.Client, sb.ID, client.PID(info.Pid), client.OutputOptions{From: "start", Follow: true})
	if all.info.State != "exited" || *all.info.ExitCode != 0 {
		t.Fatalf("end of follow: %+v", all.info)
	}
	var want strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if got := all.text("stdout"); got != want.String() {
		t.Fatalf("re-attached output differs: %d bytes, want %d", len(got), want.Len())
	}
	if all.dropped["stdout"] != 0 {
		t.Fatalf("dropped %d", all.dropped["stdout"])
	}
	if !strings.HasPrefix(want.String(), first.String()) {
		t.Fatalf("first client's output %q is not a prefix", first.String())
	}
	// Resume exactly where the first client stopped.
	rest := collect(t, e.Client, sb.ID, client.PID(info.Pid), client.OutputOptions{From: fmt.Sprintf("stdout:%d,stderr:0", resume)})
	if got := first.String() + rest.text("stdout"); got != want.String() {
		t.Fatalf("resumed output differs (%d+%d bytes)", first.Len(), len(rest.text("stdout")))
	}
	// from=tail on an exited process: nothing, just the state.
	tail := collect(t, e.Client, sb.ID, client.PID(info.Pid), client.OutputOptions{From: "tail"})
	if tail.text("stdout") != "" || tail.info.State != "exited" {
		t.Fatalf("tail: %q %+v", tail.text("stdout"), tail.info)
	}
}

// Output beyond the ring buffer is dropped oldest first, and readers are
// told how many bytes they lost.
func TestRingOverflow(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	const total, buf = 100000, 4096
	info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{
		Cmd: []string{"sh", "-c", fmt.Sprintf(`head -c %d /dev/zero | tr '\0' a; printf END`, total-3)}, BufferBytes: buf})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.Client.WaitProcess(ctx, sb.ID, client.PID(info.Pid), 30*time.Second)
	if err != nil || w.State != "exited" {
		t.Fatalf("wait: %v %+v", err, w)
	}
	// The output may still be draining right after the exit.
	col := collect(t, e.Client, sb.ID, client.PID(info.Pid), client.OutputOptions{Follow: true})
	st := col.info.Streams["stdout"]
	if st.Written != total || st.Dropped != total-buf || st.Buffer != buf {
		t.Fatalf("stream info %+v", st)
	}
	if col.dropped["stdout"] != total-buf {
		t.Fatalf("reader told of %d dropped bytes, want %d", col.dropped["stdout"], total-buf)
	}
	got := col.text("stdout")
	if len(got) != buf || !strings.HasSuffix(got, "aaaEND") || strings.Trim(got[:buf-3], "a") != "" {
		t.Fatalf("kept %d bytes ending %q", len(got), got[max(0, len(got)-10):])
	}
	// A buffer outside the allowed range is refused.
	if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"true"}, BufferBytes: 100}); errCode(err) != "invalid_argument" {
		t.Fatalf("tiny buffer: %v", err)
	}
}

// DELETE kills the whole tree, including a double-forked child that left
// the session (setsid) and was re-parented to the agent.
func TestTreeKill(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	script := `setsid sh -c 'sleep 1000 & echo $! > /tmp/grandchild' & wait; echo started; exec sleep 1000`
	info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, e.Client, sb.ID, client.PID(info.Pid), "started")
	alive := func() bool {
		r := e.Sh(sb.ID, `kill -0 "$(cat /tmp/grandchild)" 2>/dev/null && echo alive || echo dead`)
		return strings.TrimSpace(r.Stdout) == "alive"
	}
	ppid := e.Sh(sb.ID, `awk '/^PPid:/ {print $2}' /proc/$(cat /tmp/grandchild)/status`).Stdout
	if strings.TrimSpace(ppid) != "1" {
		t.Fatalf("grandchild's parent is %q, want the agent (1): not double-forked", ppid)
	}
	// Positive control: killing only the main process leaves the
	// grandchild running (it is in another session and process group).
	if _, err := e.Client.SignalProcess(ctx, sb.ID, client.PID(info.Pid), "KILL", false); err != nil {
		t.Fatal(err)
	}
	if w, err := e.Client.WaitProcess(ctx, sb.ID, client.PID(info.Pid), 30*time.Second); err != nil || w.State != "exited" {
		t.Fatalf("wait: %v %+v", err, w)
	}
	if !alive() {
		t.Fatal("the grandchild died with its grandparent: the control shows nothing")
	}
	// The tree kill finds it through the process's cgroup sub-group.
	if _, err := e.Client.KillProcess(ctx, sb.ID, client.PID(info.Pid)); err != nil {
		t.Fatal(err)
	}
	if alive() {
		t.Fatal("the double-forked grandchild survived the tree kill")
	}

	// A running tree: DELETE kills it all and reports the exit.
	info2, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, e.Client, sb.ID, client.PID(info2.Pid), "started")
	if !alive() {
		t.Fatal("second grandchild not running")
	}
	k, err := e.Client.KillProcess(ctx, sb.ID, client.PID(info2.Pid))
	if err != nil || k.State != "exited" || k.Signal != "SIGKILL" {
		t.Fatalf("kill: %v %+v", err, k)
	}
	if alive() {
		t.Fatal("grandchild survived DELETE of a running tree")
	}
	// A tree signal reaches every member: TERM to the tree of a fresh one.
	info3, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, e.Client, sb.ID, client.PID(info3.Pid), "started")
	n, err := e.Client.SignalProcess(ctx, sb.ID, client.PID(info3.Pid), "TERM", true)
	if err != nil || n < 2 {
		t.Fatalf("tree signal: %d %v", n, err)
	}
	if w, err := e.Client.WaitProcess(ctx, sb.ID, client.PID(info3.Pid), 30*time.Second); err != nil || w.Signal != "SIGTERM" {
		t.Fatalf("wait: %v %+v", err, w)
	}
	if alive() {
		t.Fatal("grandchild survived the tree SIGTERM")
	}
}

func TestLimitsAndTags(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sleep", "1000"}, Tag: "dup"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sleep", "1000"}, Tag: "dup"}); errCode(err) != "conflict" {
		t.Fatalf("duplicate tag: %v", err)
	}
	for _, bad := range []string{"a/b", "tab\there", strings.Repeat("x", 129)} {
		if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"true"}, Tag: bad}); errCode(err) != "invalid_argument" {
			t.Fatalf("tag %q: %v", bad, err)
		}
	}
	// A tag with spaces and UTF-8 is addressable in the path.
	if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sleep", "1000"}, Tag: "dev server é"}); err != nil {
		t.Fatal(err)
	}
	if p, err := e.Client.Process(ctx, sb.ID, client.Tag("dev server é")); err != nil || p.Tag != "dev server é" {
		t.Fatalf("by tag: %v %+v", err, p)
	}
	// Up to the limit of running processes, then 429.
	for i := 2; i < 64; i++ {
		if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sleep", "1000"}, BufferBytes: 4096}); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	_, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"sleep", "1000"}, BufferBytes: 4096})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 429 {
		t.Fatalf("65th process: %v", err)
	}
	// Killing one frees a slot.
	if _, err := e.Client.KillProcess(ctx, sb.ID, client.Tag("dup")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"true"}}); err != nil {
		t.Fatalf("after a kill: %v", err)
	}
	// Another tenant sees none of it.
	other := sandbox.Scope{Tenant: "someone-else", Rights: rights.All}
	if _, err := e.Manager.Processes(ctx, other, sb.ID); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("other tenant: %v", err)
	}
	if _, err := e.Manager.StartProcess(ctx, other, sb.ID, sandbox.ProcessRequest{Cmd: []string{"true"}}); err == nil {
		t.Fatal("other tenant started a process")
	}
}
