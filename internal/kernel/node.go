package kernel

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

//go:embed node_driver.js
var nodeDriver string

// maxDriverLine bounds one event line from the Node driver.
const maxDriverLine = 64 << 20

// nodeEngine drives node running node_driver.js: cells go out as JSON
// lines on the driver's fd 3, events come back on its fd 4; what the
// process writes to its own stdout and stderr (child processes do) is the
// running cell's output too.
type nodeEngine struct {
	*proc
	cmd *os.File // write end of the driver's fd 3

	mu     sync.Mutex
	cur    *cell
	doneCh chan nodeDone
	seq    int
	wmu    sync.Mutex
}

type nodeDone struct {
	status string
	count  int
}

type nodeEvent struct {
	T      string                     `json:"t"`
	Name   string                     `json:"name"`
	Text   string                     `json:"text"`
	Main   bool                       `json:"main"`
	Bundle map[string]json.RawMessage `json:"bundle"`
	Count  int                        `json:"count"`
	Status string                     `json:"status"`
	ID     int                        `json:"id"`
	Error  *codewire.ExecError        `json:"error"`
}

func (s *Supervisor) startNode(ctx context.Context, cwd string, env []string) (engine, error) {
	if s.cfg.Node == "" {
		return nil, fmt.Errorf("node is not installed in the sandbox (Debian: apt-get install nodejs)")
	}
	// fd 3: cells in; fd 4: events out; stdout, stderr: raw output.
	rs, ws, err := pipes(4)
	if err != nil {
		return nil, err
	}
	cmdR, cmdW := rs[0], ws[0]
	evR, evW := rs[1], ws[1]
	outR, outW := rs[2], ws[2]
	errR, errW := rs[3], ws[3]
	p, err := s.starter.Start(ProcSpec{
		Path:       s.cfg.Node,
		Args:       []string{s.cfg.Node, "--expose-internals", "--stack-trace-limit=50", "-e", nodeDriver},
		Env:        mergeEnv(env, map[string]string{"PADDOCK_OUTPUT_CAP": strconv.Itoa(s.lim.MaxOutputBytes)}),
		Dir:        cwd,
		Stdout:     outW,
		Stderr:     errW,
		ExtraFiles: []*os.File{cmdR, evW},
	})
	closeAll(cmdR, evW, outW, errW)
	if err != nil {
		closeAll(cmdW, evR, outR, errR)
		return nil, fmt.Errorf("start %s: %w", s.cfg.Node, err)
	}
	e := &nodeEngine{proc: &proc{p: p, tail: newTail(8 << 10)}, cmd: cmdW, doneCh: make(chan nodeDone, 1)}
	ready := make(chan struct{})
	var readyOnce sync.Once
	go func() {
		defer evR.Close()
		_ = readLines(evR, maxDriverLine, func(line []byte, tooLong bool) {
			if tooLong {
				if c := e.current(); c != nil {
					c.out.markTruncated()
				}
				return
			}
			var ev nodeEvent
			if json.Unmarshal(line, &ev) != nil {
				return
			}
			if ev.T == "ready" {
				readyOnce.Do(func() { close(ready) })
				return
			}
			e.event(ev)
		})
	}()
	go e.pumpRaw(outR, codewire.EventStdout)
	go e.pumpRaw(errR, codewire.EventStderr)

	t := time.NewTimer(s.cfg.StartTimeout)
	defer t.Stop()
	select {
	case <-ready:
		return e, nil
	case <-p.Done():
		e.kill()
		return nil, fmt.Errorf("node ended while starting (%s): %s", e.reason(), lastLine(e.tail.String()))
	case <-t.C:
		e.kill()
		return nil, fmt.Errorf("node did not start within %v", s.cfg.StartTimeout)
	case <-ctx.Done():
		e.kill()
		return nil, ctx.Err()
	}
}

func (e *nodeEngine) current() *cell {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

func (e *nodeEngine) pumpRaw(r *os.File, name string) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if c := e.current(); c != nil {
				c.out.raw(name, buf[:n])
			} else {
				_, _ = e.tail.Write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

func (e *nodeEngine) event(ev nodeEvent) {
	c := e.current()
	if c == nil {
		return
	}
	switch ev.T {
	case "stream":
		name := codewire.EventStdout
		if ev.Name == "stderr" {
			name = codewire.EventStderr
		}
		c.out.stream(name, ev.Text)
	case "result":
		if ev.Bundle != nil {
			c.out.result(ev.Main, ev.Bundle, ev.Count)
		}
	case "error":
		if ev.Error != nil {
			c.out.fail(*ev.Error)
		}
	case "done":
		select {
		case e.doneCh <- nodeDone{status: ev.Status, count: ev.Count}:
		default:
		}
	}
}

func (e *nodeEngine) execute(c *cell) cellEnd {
	e.mu.Lock()
	e.cur = c
	e.seq++
	id := e.seq
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.cur = nil
		e.mu.Unlock()
	}()
	line, err := json.Marshal(map[string]any{"id": id, "code": c.code, "lang": c.lang, "env": c.env})
	if err != nil {
		return cellEnd{status: codewire.StatusError}
	}
	e.wmu.Lock()
	_, err = e.cmd.Write(append(line, '\n'))
	e.wmu.Unlock()
	if err != nil {
		<-e.p.Done()
		return cellEnd{status: codewire.StatusError, died: true}
	}
	select {
	case d := <-e.doneCh:
		c.out.flushRaw()
		st := codewire.StatusOK
		if d.status != "ok" {
			st = codewire.StatusError
		}
		return cellEnd{status: st, count: d.count}
	case <-e.p.Done():
		c.out.flushRaw()
		return cellEnd{status: codewire.StatusError, died: true}
	}
}

func (e *nodeEngine) done() <-chan struct{} { return e.p.Done() }
func (e *nodeEngine) interrupt() error      { return interruptProc(e.p) }

func (e *nodeEngine) kill() {
	e.proc.kill()
	_ = e.cmd.Close()
}
