//go:build linux

package kernel

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

func TestJavaScriptContext(t *testing.T) {
	needNode(t)
	s := newSup(t, nil)
	id := newCtx(t, s, "javascript")

	mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "const base = 40; function add(a) { return a + 2 }"})
	r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "console.log('sum', add(base)); add(base)"})
	if r.stdout() != "sum 42\n" || r.mainText() != `"42"` {
		t.Errorf("stdout %q, result %s", r.stdout(), r.mainText())
	}
	// Top-level await, and a const declared again (a re-run cell).
	r = mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "const base = await Promise.resolve(1); base + 1"})
	if r.mainText() != `"2"` {
		t.Errorf("await: %s", r.mainText())
	}
	// Objects come back as JSON too.
	r = mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "({name: 'x', list: [1, 2]})"})
	var obj struct {
		Name string `json:"name"`
		List []int  `json:"list"`
	}
	if err := json.Unmarshal(r.main().Bundle["application/json"], &obj); err != nil || obj.Name != "x" || len(obj.List) != 2 {
		t.Errorf("json result %s: %v", r.main().Bundle["application/json"], err)
	}
	// Errors: name, message, stack.
	r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: "function boom() { throw new RangeError('too far') }\nboom()"})
	e := r.errEvent()
	if r.end.Status != codewire.StatusError || e == nil || e.Name != "RangeError" || e.Value != "too far" ||
		!strings.Contains(e.Traceback, "boom") || strings.Contains(e.Traceback, "paddockDriver") {
		t.Errorf("error %+v end %+v", e, r.end)
	}
	// require resolves built-ins; display() shows without ending the cell.
	r = mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "const os = require('os'); display({'text/html': '<b>x</b>'}, {raw: true}); typeof os.cpus"})
	if res := r.results(); len(res) != 2 || res[0].IsMain || string(res[0].Bundle["text/html"]) != `"<b>x</b>"` {
		t.Errorf("display: %+v", res)
	}
	if info, _ := s.Get(context.Background(), id); info.ExecutionCount != 6 {
		t.Errorf("count %d", info.ExecutionCount)
	}
}

func TestTypeScriptContext(t *testing.T) {
	needNode(t)
	if _, err := os.Stat("/usr/share/nodejs/typescript"); err != nil {
		t.Skip("needs Debian's node-typescript")
	}
	s := newSup(t, nil)
	id := newCtx(t, s, "typescript")
	mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "interface P { name: string }\nconst p: P = { name: 'ts' }"})
	r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "const n: number = await Promise.resolve(p.name.length); n"})
	if r.mainText() != `"2"` {
		t.Errorf("ts result %s", r.mainText())
	}
	r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: "let q: = 3"})
	if e := r.errEvent(); e == nil || e.Name != "SyntaxError" {
		t.Errorf("ts syntax error %+v", e)
	}
}
