package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/wire"
)

// Code interpreter scenarios (docs/code.md): a cell on a warm Python
// context through REST and through E2B's code-interpreter protocol, the
// first cell of a new sandbox, and what an idle Python context costs.

// firstCellRuns bounds the first-cell scenario (each run starts a kernel).
const firstCellRuns = 5

func cell(code string) wire.CodeExecuteRequest {
	var r wire.CodeExecuteRequest
	r.Code = code
	return r
}

// runCell runs code in sandbox id and checks the value is want.
func runCell(ctx context.Context, c *client.Client, id, code, want string) error {
	ex, err := c.RunCode(ctx, id, cell(code))
	if err != nil {
		return err
	}
	if ex.End == nil || ex.End.Status != "ok" {
		msg := ""
		if ex.End != nil {
			msg = ex.End.Status + " " + ex.End.Message
		}
		if ex.Error != nil {
			msg += " " + ex.Error.Name + ": " + ex.Error.Value
		}
		return fmt.Errorf("the cell did not end ok: %s", clip(msg, 300))
	}
	if got := ex.Text(); got != want {
		return fmt.Errorf("the cell answered %q, want %q", clip(got, 100), want)
	}
	return nil
}

// e2bCell is one POST /execute of E2B's code-interpreter protocol, read
// to its end_of_execution line, checking the result's text.
func e2bCell(ctx context.Context, base, sandboxID, token, code, want string) error {
	body, _ := json.Marshal(map[string]string{"code": code})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/execute", strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("E2b-Sandbox-Id", sandboxID)
	req.Header.Set("E2b-Sandbox-Port", "49999")
	req.Header.Set("X-Access-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("POST /execute: %d %s", resp.StatusCode, clip(string(b), 300))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	got := ""
	for sc.Scan() {
		var line struct {
			Type string `json:"type"`
			Text string `json:"text"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("malformed line: %w", err)
		}
		switch line.Type {
		case "result":
			got = line.Text
		case "error":
			return fmt.Errorf("the cell raised %s", clip(line.Name, 100))
		case "end_of_execution":
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // reuse the connection
			if got != want {
				return fmt.Errorf("the cell answered %q, want %q", clip(got, 100), want)
			}
			return nil
		}
	}
	return fmt.Errorf("the stream ended without end_of_execution: %v", sc.Err())
}

// code runs the code scenarios on one sandbox (the warm context) plus the
// sandboxes the first-cell scenario makes.
func (r *runner) code(ctx context.Context, st *Stack) {
	names := []string{sCodeREST, sCodeE2B, sCodeFirst, sCodeIdle}
	if why := r.caps.lacks("/code", "the code interpreter"); why != "" {
		for _, n := range names {
			r.set(r.result(n).without(StatusUnavailable, why))
		}
		return
	}
	sb, err := r.create(ctx, st, r.spec())
	if err != nil {
		for _, n := range names {
			r.set(r.result(n).without(StatusFailed, "create: "+err.Error()))
		}
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	before, berr := st.Client.Stats(ctx, sb.ID)
	// The kernel starts with the first cell; one failing here is why every
	// scenario cannot run (a template without python3-ipykernel, say).
	t0 := time.Now()
	if err := runCell(ctx, st.Client, sb.ID, "1+1", "2"); err != nil {
		for _, n := range names {
			r.set(r.result(n).without(StatusUnavailable, "the sandbox's Python context does not run: "+err.Error()))
		}
		return
	}
	if r.sel[sCodeIdle] {
		r.codeIdle(ctx, st, sb.ID, time.Since(t0), before, berr)
	}
	if r.sel[sCodeREST] {
		r.loop(ctx, sCodeREST, 3, func(ctx context.Context) error { return runCell(ctx, st.Client, sb.ID, "1+1", "2") })
	}
	if r.sel[sCodeE2B] {
		tok, err := st.Client.CreateToken(ctx, sb.ID, []wire.Scope{wire.ScopeRead, wire.ScopeExec}, time.Hour)
		if err != nil {
			r.set(r.result(sCodeE2B).without(StatusFailed, "mint a sandbox token: "+err.Error()))
		} else {
			base := st.Client.BaseURL()
			r.loop(ctx, sCodeE2B, 3, func(ctx context.Context) error { return e2bCell(ctx, base, sb.ID, tok.Token, "1+1", "2") })
		}
	}
	if r.sel[sCodeFirst] {
		r.codeFirst(ctx, st)
	}
}

// loop times fn r.o.Runs times after warm untimed calls.
func (r *runner) loop(ctx context.Context, name string, warm int, fn func(context.Context) error) {
	res := r.result(name)
	for i := 0; i < warm; i++ {
		if err := fn(ctx); err != nil {
			r.set(res.without(StatusFailed, "warm-up: "+err.Error()))
			return
		}
	}
	r.prog.start(name, r.o.Runs)
	var samples []time.Duration
	var errs int
	var last error
	start := time.Now()
	for i := 0; i < r.o.Runs && ctx.Err() == nil; i++ {
		t := time.Now()
		err := fn(ctx)
		d := time.Since(t)
		if err != nil {
			errs, last = errs+1, err
		} else {
			samples = append(samples, d)
		}
		r.prog.step(1)
	}
	r.set(r.summarize(ctx, res, samples, time.Since(start), errs, last))
}

// codeFirst times create → first cell (the kernel's start included) of new
// sandboxes; the delete is not timed.
func (r *runner) codeFirst(ctx context.Context, st *Stack) {
	res := r.result(sCodeFirst)
	n := min(r.o.Runs, firstCellRuns)
	r.prog.start(sCodeFirst, n)
	var samples []time.Duration
	var errs int
	var last error
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t := time.Now()
		sb, err := r.create(ctx, st, r.spec())
		if err == nil {
			err = runCell(ctx, st.Client, sb.ID, "1+1", "2")
		}
		d := time.Since(t)
		if sb.ID != "" {
			_ = r.remove(ctx, st, sb.ID)
		}
		if err != nil {
			errs, last = errs+1, err
		} else {
			samples = append(samples, d)
		}
		r.prog.step(1)
	}
	out := r.summarize(ctx, res, samples, time.Since(start), errs, last)
	out.extra("runs", float64(n))
	r.set(out)
}

// codeIdle reports the memory the sandbox gained with one idle Python
// context (its cgroup's memory before the first cell and after it, idle;
// the page cache of the files the kernel read included). Its time is that
// first cell's (the kernel's start in a running sandbox).
func (r *runner) codeIdle(ctx context.Context, st *Stack, id string, first time.Duration, before wire.Stats, berr error) {
	res := r.result(sCodeIdle)
	if berr != nil {
		r.set(res.without(StatusFailed, "stats before the context: "+berr.Error()))
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(2 * time.Second): // idle
	}
	after, err := st.Client.Stats(ctx, id)
	if err != nil {
		r.set(res.without(StatusFailed, "stats: "+err.Error()))
		return
	}
	delta := after.MemoryBytes - before.MemoryBytes
	out := r.summarize(ctx, res, []time.Duration{first}, first, 0, nil)
	out.note("the time is the first cell's in a running sandbox (the Python kernel's start included)")
	out.extra("context_memory_mib", float64(delta)/mib)
	out.extra("sandbox_memory_mib_before", float64(before.MemoryBytes)/mib)
	out.extra("sandbox_memory_mib_idle_context", float64(after.MemoryBytes)/mib)
	r.set(out)
}
