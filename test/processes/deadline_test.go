package processes

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/wire"
)

// A process's timeout_ms is enforced by the sandbox: the process (and what
// it started) is killed when it passes, with nobody connected; one that
// ends first is left alone; a timeout out of range is refused.
func TestProcessDeadline(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	ctx := context.Background()
	cases := []struct {
		name    string
		cmd     []string
		timeout int64
		signal  string // "" : exits by itself with code 0
	}{
		{"killed at its deadline", []string{"sh", "-c", "sleep 60 & sleep 60"}, 500, "SIGKILL"},
		{"ends before its deadline", []string{"true"}, 60_000, ""},
		{"no deadline", []string{"sleep", "1"}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			info, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: tc.cmd, TimeoutMs: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			w, err := e.Client.WaitProcess(ctx, sb.ID, client.ProcessRef(info.ID), 30*time.Second)
			if err != nil || w.State != wire.ProcExited {
				t.Fatalf("wait: %v %+v", err, w)
			}
			if w.Signal != tc.signal {
				t.Fatalf("signal %q, want %q (%+v)", w.Signal, tc.signal, w)
			}
			if tc.signal == "" && (w.ExitCode == nil || *w.ExitCode != 0) {
				t.Fatalf("exit %+v", w)
			}
			if tc.timeout > 0 && tc.signal != "" && time.Since(start) < time.Duration(tc.timeout)*time.Millisecond {
				t.Fatalf("killed after %v, before its deadline of %d ms", time.Since(start), tc.timeout)
			}
		})
	}
	// The tree went with it: no sleep is left in the sandbox.
	res, err := e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null | grep -x sleep || true"}})
	if err != nil || len(res.Stdout) != 0 {
		t.Fatalf("sleeps left: %v %q", err, res.Stdout)
	}
	for _, bad := range []int64{-1, wire.MaxProcessTimeoutMs + 1} {
		if _, err := e.Client.StartProcess(ctx, sb.ID, client.ProcessRequest{Cmd: []string{"true"}, TimeoutMs: bad}); errCode(err) != "invalid_argument" {
			t.Fatalf("timeout_ms %d: %v", bad, err)
		}
	}
}
