//go:build linux

package code_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Rich results from a sandbox's kernels: a matplotlib figure as a PNG that
// decodes (and its chart data), a DataFrame as HTML and data; JavaScript
// and bash keep their state.
func TestRichResultsAndLanguages(t *testing.T) {
	needPython(t)
	e := testenv.New(t, testenv.Options{})
	b := newBox(t, e, sandbox.Spec{})

	t.Run("matplotlib PNG", func(t *testing.T) {
		needPythonData(t)
		r := b.ok(t, cell("", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [4, 1, 9], label='s')\nplt.title('growth')\nplt.show()"))
		var img *codewire.Result
		for _, res := range r.x.Results {
			if _, ok := res.Bundle["image/png"]; ok {
				img = res
			}
		}
		if img == nil {
			t.Fatalf("no image/png result: %+v", r.x.Results)
		}
		var b64 string
		if err := json.Unmarshal(img.Bundle["image/png"], &b64); err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		pic, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("the PNG does not decode: %v", err)
		}
		if bnd := pic.Bounds(); bnd.Dx() < 100 || bnd.Dy() < 100 {
			t.Fatalf("a %v image", bnd)
		}
		var chart struct {
			Type  string `json:"type"`
			Title string `json:"title"`
		}
		if err := json.Unmarshal(img.Chart, &chart); err != nil || chart.Type != "line" || chart.Title != "growth" {
			t.Fatalf("chart %s: %v", img.Chart, err)
		}
	})
	t.Run("DataFrame html and data", func(t *testing.T) {
		needPythonData(t)
		r := b.ok(t, cell("", "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})"))
		m := r.x.Main()
		if m == nil {
			t.Fatal("no main result")
		}
		var html string
		_ = json.Unmarshal(m.Bundle["text/html"], &html)
		if !strings.Contains(html, "<table") || !strings.Contains(html, "<td>x</td>") {
			t.Fatalf("html %q", html)
		}
		var data map[string][]any
		if err := json.Unmarshal(m.Data, &data); err != nil || len(data["a"]) != 2 || data["b"][1] != "y" {
			t.Fatalf("data %s: %v", m.Data, err)
		}
	})
	t.Run("JavaScript state across cells", func(t *testing.T) {
		needNode(t)
		js := b.create(t, guestapi.CodeCreateRequest{CreateContextRequest: codewire.CreateContextRequest{Language: "javascript"}})
		b.ok(t, cell(js.ID, "let n = 40; const add = (x) => x + n;"))
		if r := b.ok(t, cell(js.ID, "await new Promise(r => setTimeout(r, 5)); add(2)")); r.text() != "42" {
			t.Fatalf("add(2) = %q", r.text())
		}
		r := b.exec(t, cell(js.ID, "null.x"))
		if r.status() != codewire.StatusError || r.x.Error == nil || r.x.Error.Name != "TypeError" {
			t.Fatalf("a JS error: %+v %+v", r.x.End, r.x.Error)
		}
		if r := b.ok(t, cell(js.ID, "n")); r.text() != "40" {
			t.Fatalf("after the error: %q", r.text())
		}
	})
	t.Run("bash", func(t *testing.T) {
		sh := b.create(t, guestapi.CodeCreateRequest{CreateContextRequest: codewire.CreateContextRequest{Language: "bash"}})
		b.ok(t, cell(sh.ID, "cd /tmp\nX=5\nf() { echo \"f:$1\"; }"))
		if r := b.ok(t, cell(sh.ID, "echo $X $PWD; f 1")); r.stdout() != "5 /tmp\nf:1\n" {
			t.Fatalf("bash state: %q", r.stdout())
		}
		r := b.exec(t, cell(sh.ID, "false"))
		if r.status() != codewire.StatusError || r.x.End.ExitCode == nil || *r.x.End.ExitCode != 1 {
			t.Fatalf("false: %+v", r.x.End)
		}
	})
	t.Run("TypeScript", func(t *testing.T) {
		needNode(t)
		if _, err := os.Stat("/usr/share/nodejs/typescript"); err != nil {
			t.Skip("needs the TypeScript compiler (Debian node-typescript)")
		}
		ts := b.create(t, guestapi.CodeCreateRequest{CreateContextRequest: codewire.CreateContextRequest{Language: "ts"}})
		b.ok(t, cell(ts.ID, "const k: number = 6;\ninterface P { v: number }"))
		if r := b.ok(t, cell(ts.ID, "const p: P = { v: k * 7 }; p.v")); r.text() != "42" {
			t.Fatalf("ts: %q", r.text())
		}
	})
}
