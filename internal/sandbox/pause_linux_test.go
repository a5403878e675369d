//go:build linux

package sandbox_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// counter starts a background loop in sb that bumps a number in memory
// (a shell variable) every 50 ms and writes it to /tmp/c: while frozen
// the file must not move; after a resume it continues from where it was.
func counter(t *testing.T, e *testenv.Env, id string) {
	t.Helper()
	r := e.Sh(id, `nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/c.new; mv /tmp/c.new /tmp/c; sleep 0.05; done' >/dev/null 2>&1 & sleep 0.3; cat /tmp/c`)
	if r.ExitCode != 0 {
		t.Fatalf("start counter: %+v", r)
	}
}

func readCounter(t *testing.T, e *testenv.Env, id string) int {
	t.Helper()
	r := e.Sh(id, "cat /tmp/c")
	n, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if err != nil {
		t.Fatalf("counter: %+v", r)
	}
	return n
}

func TestPauseResume(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{TimeoutS: 600})
	counter(t, e, sb.ID)
	before := readCounter(t, e, sb.ID)
	if after := func() int { time.Sleep(200 * time.Millisecond); return readCounter(t, e, sb.ID) }(); after <= before {
		t.Fatalf("positive control: the counter does not move while running (%d then %d)", before, after)
	}
	lifeBefore := time.Until(mustGet(t, e, sb.ID).ExpiresAt)
	atPause := readCounter(t, e, sb.ID)
	p, err := e.Manager.Pause(ctx, e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.State != sandbox.StatePaused || p.PausedAt == nil || p.RemainingMS <= 0 {
		t.Fatalf("after pause: %+v", p)
	}
	// Idempotent.
	if p2, err := e.Manager.Pause(ctx, e.Scope, sb.ID); err != nil || p2.State != sandbox.StatePaused {
		t.Fatalf("second pause: %+v %v", p2, err)
	}
	// Calls that need the sandbox: 409 sandbox_paused.
	// Through REST: 409 with the code sandbox_paused.
	if _, err := e.Client.Exec(ctx, sb.ID, execReq("true")); errs.CodeOf(err) != errs.CodeSandboxPaused {
		t.Fatalf("exec on a paused sandbox over REST: %v (code %s)", err, errs.CodeOf(err))
	}
	if _, err := e.Manager.ReadFile(ctx, e.Scope, sb.ID, sandbox.ReadFileRequest{Path: "/tmp/c"}); !errorsIs(err, &errs.Error{Code: errs.CodeSandboxPaused}) {
		t.Fatalf("read on a paused sandbox: %v", err)
	}
	// Stats still answer; the frozen sandbox uses no CPU.
	s1, err := e.Manager.Stats(ctx, e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	s2, _ := e.Manager.Stats(ctx, e.Scope, sb.ID)
	if d := s2.CPUUsage - s1.CPUUsage; d > 5*time.Millisecond {
		t.Errorf("a paused sandbox used %v of CPU in 1s", d)
	}
	// The clock stops: remaining life after the pause is what it was.
	time.Sleep(2 * time.Second)
	resumedAt := time.Now()
	r, err := e.Manager.Resume(ctx, e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != sandbox.StateRunning || r.PausedAt != nil {
		t.Fatalf("after resume: %+v", r)
	}
	lifeAfter := time.Until(r.ExpiresAt)
	if d := lifeBefore - lifeAfter; d < 0 || d > time.Second {
		t.Errorf("life before pause %v, after a 3 s pause %v: the paused time was counted", lifeBefore, lifeAfter)
	}
	if _, err := e.Manager.Resume(ctx, e.Scope, sb.ID); err != nil {
		t.Fatalf("second resume: %v", err)
	}
	// The counter continued from its value: not reset, and it did not
	// run during the 3 s pause (60 ticks).
	if n, ran := readCounter(t, e, sb.ID), ticks(resumedAt); n < atPause || n > atPause+ran {
		t.Errorf("counter after a 3 s pause = %d, was %d at the pause (at most %d ticks since the resume)", n, atPause, ran)
	}
	// Deleting a paused sandbox works (v1: SIGKILL needs a thaw).
	if _, err := e.Manager.Pause(ctx, e.Scope, sb.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Manager.Delete(ctx, e.Scope, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Manager.Pause(ctx, e.Scope, sb.ID); !errorsIs(err, errs.ErrNotFound) {
		t.Fatalf("pause of a deleted sandbox: %v", err)
	}
}

func TestAutoResume(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{AutoResume: true})
	if _, err := e.Manager.Pause(ctx, e.Scope, sb.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.Sh(sb.ID, "echo hi"); r.Stdout != "hi\n" {
		t.Fatalf("exec with auto_resume: %+v", r)
	}
	if got := mustGet(t, e, sb.ID); got.State != sandbox.StateRunning {
		t.Fatalf("state after an auto-resumed exec: %s", got.State)
	}
}

func TestLifecyclePolicy(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	// on_timeout: pause — the timeout pauses; a resume gives a whole timeout.
	sb := e.Create(sandbox.Spec{TimeoutS: 1, OnTimeout: "pause"})
	waitState(t, e, sb.ID, sandbox.StatePaused, 5*time.Second)
	r, err := e.Manager.Resume(ctx, e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(r.ExpiresAt); left < 500*time.Millisecond {
		t.Errorf("resumed after its timeout with %v left", left)
	}
	// idle_pause_after_s: no traffic → paused; traffic keeps it awake.
	idle := e.Create(sandbox.Spec{IdlePauseAfterS: 2})
	busy := e.Create(sandbox.Spec{IdlePauseAfterS: 2})
	go func() { _, _ = e.Manager.Exec(ctx, e.Scope, busy.ID, execReq("sleep", "4"), nil, nil, false) }()
	waitState(t, e, idle.ID, sandbox.StatePaused, 6*time.Second)
	if got := mustGet(t, e, busy.ID); got.State != sandbox.StateRunning {
		t.Errorf("a sandbox running a 4 s exec was paused as idle after 2 s (state %s)", got.State)
	}
	// A paused sandbox dies after paused_timeout_s.
	short := e.Create(sandbox.Spec{PausedTimeoutS: 1})
	if _, err := e.Manager.Pause(ctx, e.Scope, short.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := e.Manager.Get(ctx, e.Scope, short.ID); errorsIs(err, errs.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a sandbox paused past paused_timeout_s still exists")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestLifecycleBadInput(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	for _, spec := range []sandbox.Spec{
		{OnTimeout: "sleep"},
		{PausedTimeoutS: -1},
		{PausedTimeoutS: 31 * 24 * 3600},
		{IdlePauseAfterS: -5},
	} {
		if _, err := e.Manager.Create(ctx, e.Scope, spec); !errorsIs(err, errs.ErrInvalid) {
			t.Errorf("create %+v: %v, want invalid_argument", spec, err)
		}
	}
	if _, err := e.Manager.Pause(ctx, e.Scope, "sb-doesnotexist"); !errorsIs(err, errs.ErrNotFound) {
		t.Errorf("pause of an unknown sandbox: %v", err)
	}
	if _, err := e.Manager.Resume(ctx, e.Scope, "../x"); !errorsIs(err, errs.ErrNotFound) {
		t.Errorf("resume of a bad id: %v", err)
	}
}

// A paused sandbox stays paused across a server restart, is reattached
// paused (its counter still), and resumes with its memory intact.
func TestPausedAcrossRestart(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	ctx := context.Background()
	sb := e.Create(sandbox.Spec{TimeoutS: 600})
	counter(t, e, sb.ID)
	frozenAt := readCounter(t, e, sb.ID)
	p, err := e.Manager.Pause(ctx, e.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.Server.Close()
	_ = e.Manager.Close(ctx)
	e.Manager = nil
	e.Shutdown()
	time.Sleep(2 * time.Second) // 40 ticks, were it running
	e2 := testenv.New(t, testenv.Options{DataDir: e.Data, CgroupPrefix: e.Prefix, UIDBase: e.UIDBase})
	got, err := e2.Manager.Get(ctx, e2.Scope, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != sandbox.StatePaused || got.RemainingMS != p.RemainingMS {
		t.Fatalf("after restart: state %s remaining %d ms, want paused with %d ms", got.State, got.RemainingMS, p.RemainingMS)
	}
	if _, err := e2.Manager.Exec(ctx, e2.Scope, sb.ID, execReq("true"), nil, nil, false); !errorsIs(err, &errs.Error{Code: errs.CodeSandboxPaused}) {
		t.Fatalf("exec after restart: %v", err)
	}
	resumedAt := time.Now()
	if _, err := e2.Manager.Resume(ctx, e2.Scope, sb.ID); err != nil {
		t.Fatal(err)
	}
	if n, ran := readCounter(t, e2, sb.ID), ticks(resumedAt); n < frozenAt || n > frozenAt+ran {
		t.Errorf("counter after restart and resume = %d, was %d when frozen (at most %d ticks since the resume)", n, frozenAt, ran)
	}
}

func waitState(t *testing.T, e *testenv.Env, id string, want sandbox.State, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := mustGet(t, e, id)
		if got.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s is %s after %v, want %s", id, got.State, limit, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mustGet(t *testing.T, e *testenv.Env, id string) sandbox.Sandbox {
	t.Helper()
	sb, err := e.Manager.Get(context.Background(), e.Scope, id)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func execReq(argv ...string) sandbox.ExecRequest { return sandbox.ExecRequest{Cmd: argv} }

// ticks bounds how often the counter can have ticked since t: once per
// 50 ms it ran, plus the reads' own slack. Under load the bound grows
// with the time the resume and the read took, never with the pause.
func ticks(since time.Time) int { return int(time.Since(since)/(50*time.Millisecond)) + 3 }
