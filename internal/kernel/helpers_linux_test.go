//go:build linux

package kernel

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

func needPython(t testing.TB) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel (Debian python3-ipykernel): %v", err)
	}
}

func needPythonData(t testing.TB) {
	t.Helper()
	needPython(t)
	if err := exec.Command("/usr/bin/python3", "-c", "import pandas, matplotlib, numpy").Run(); err != nil {
		t.Skipf("needs pandas, matplotlib and numpy for /usr/bin/python3 (Debian python3-pandas python3-matplotlib): %v", err)
	}
}

func needNode(t testing.TB) {
	t.Helper()
	if findNode(os.Environ()) == "" {
		t.Skip("needs node (Debian nodejs)")
	}
}

func needBash(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("needs /bin/bash")
	}
}

func newSup(t testing.TB, mod func(*Config)) *Supervisor {
	t.Helper()
	cfg := Config{Cwd: t.TempDir(), StateDir: t.TempDir()}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// run is one execution's stream, collected.
type run struct {
	events []codewire.Event
	start  *codewire.Start
	end    *codewire.End
	err    error
}

func (r run) stdout() string { return r.text(codewire.EventStdout) }
func (r run) stderr() string { return r.text(codewire.EventStderr) }

func (r run) text(typ string) string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Type == typ {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func (r run) results() []*codewire.Result {
	var out []*codewire.Result
	for _, e := range r.events {
		if e.Type == codewire.EventResult {
			out = append(out, e.Result)
		}
	}
	return out
}

func (r run) main() *codewire.Result {
	for _, res := range r.results() {
		if res.IsMain {
			return res
		}
	}
	return nil
}

func (r run) mainText() string {
	m := r.main()
	if m == nil {
		return ""
	}
	var s string
	if raw, ok := m.Bundle["text/plain"]; ok {
		s = string(raw)
	}
	return s
}

func (r run) errEvent() *codewire.ExecError {
	for _, e := range r.events {
		if e.Type == codewire.EventError {
			return e.Error
		}
	}
	return nil
}

func execute(t testing.TB, s *Supervisor, req codewire.ExecuteRequest) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return executeCtx(ctx, s, req)
}

func executeCtx(ctx context.Context, s *Supervisor, req codewire.ExecuteRequest) run {
	var r run
	r.err = s.Execute(ctx, req, func(e codewire.Event) error {
		r.events = append(r.events, e)
		switch e.Type {
		case codewire.EventStart:
			r.start = e.Start
		case codewire.EventEnd:
			r.end = e.End
		}
		return nil
	})
	return r
}

// mustOK runs code and fails unless the cell ended ok.
func mustOK(t testing.TB, s *Supervisor, req codewire.ExecuteRequest) run {
	t.Helper()
	r := execute(t, s, req)
	if r.err != nil {
		t.Fatalf("execute %q: %v", trunc(req.Code, 80), r.err)
	}
	if r.end == nil || r.end.Status != codewire.StatusOK {
		t.Fatalf("execute %q: end %+v, error %+v, stderr %q", trunc(req.Code, 80), r.end, r.errEvent(), r.stderr())
	}
	return r
}

func newCtx(t testing.TB, s *Supervisor, lang string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := s.Create(ctx, codewire.CreateContextRequest{Language: lang})
	if err != nil {
		t.Fatalf("create %s context: %v", lang, err)
	}
	return c.ID
}

func mustList(t testing.TB, s *Supervisor) []codewire.Context {
	t.Helper()
	l, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}
