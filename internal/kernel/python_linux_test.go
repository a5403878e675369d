//go:build linux

package kernel

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

func TestPythonStateAndErrors(t *testing.T) {
	needPython(t)
	s := newSup(t, nil)
	id := newCtx(t, s, "python")

	mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "x = 40\ndef f(a):\n    return a + 2"})
	r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "print('hello')\nf(x)"})
	if got := r.stdout(); got != "hello\n" {
		t.Errorf("stdout %q", got)
	}
	if got := r.mainText(); got != `"42"` {
		t.Errorf("main result %s", got)
	}
	if r.end.ExecutionCount != 2 || r.main().ExecutionCount != 2 {
		t.Errorf("execution count: end %d, result %d", r.end.ExecutionCount, r.main().ExecutionCount)
	}

	r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: "def g():\n    return 1/0\ng()"})
	if r.err != nil || r.end.Status != codewire.StatusError {
		t.Fatalf("error cell: %v %+v", r.err, r.end)
	}
	e := r.errEvent()
	if e == nil || e.Name != "ZeroDivisionError" || e.Value != "division by zero" {
		t.Fatalf("error event %+v", e)
	}
	for _, want := range []string{"Traceback", "g()", "1/0", "ZeroDivisionError"} {
		if !strings.Contains(e.Traceback, want) {
			t.Errorf("traceback lacks %q:\n%s", want, e.Traceback)
		}
	}
	if strings.Contains(e.Traceback, "\x1b[") {
		t.Errorf("traceback has ANSI colours:\n%q", e.Traceback)
	}
	// input() is refused at once, not waited for.
	r = execute(t, s, codewire.ExecuteRequest{Context: id, Code: "input('name? ')"})
	if e := r.errEvent(); e == nil || !strings.Contains(e.Name, "StdinNotImplemented") {
		t.Errorf("input(): %+v", e)
		for _, e := range r.events {
			t.Logf("event %+v end %+v error %+v", e, e.End, e.Error)
		}
	}
	// The state survived the errors.
	r = mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "x"})
	if r.mainText() != `"40"` {
		t.Errorf("x after errors: %s", r.mainText())
	}
}

func TestPythonRichResults(t *testing.T) {
	needPythonData(t)
	s := newSup(t, nil)
	id := newCtx(t, s, "python")

	t.Run("matplotlib", func(t *testing.T) {
		r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: `
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3], [4, 5, 9], label="growth")
ax.set_title("Growth")
ax.set_xlabel("Year")
ax.set_ylabel("Revenue (USD)")
plt.show()
`})
		res := r.results()
		if len(res) != 1 || res[0].IsMain {
			t.Fatalf("results %+v", res)
		}
		var b64 string
		if err := json.Unmarshal(res[0].Bundle["image/png"], &b64); err != nil {
			t.Fatalf("no image/png: %v (bundle keys %v)", err, keys(res[0].Bundle))
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("the PNG does not decode: %v", err)
		}
		if img.Bounds().Dx() < 100 {
			t.Errorf("image %v", img.Bounds())
		}
		var chart struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			XLabel  string `json:"x_label"`
			YLabel  string `json:"y_label"`
			YUnit   string `json:"y_unit"`
			XScale  string `json:"x_scale"`
			Element []struct {
				Label  string       `json:"label"`
				Points [][2]float64 `json:"points"`
			} `json:"elements"`
		}
		if err := json.Unmarshal(res[0].Chart, &chart); err != nil {
			t.Fatalf("chart %s: %v", res[0].Chart, err)
		}
		if chart.Type != "line" || chart.Title != "Growth" || chart.XLabel != "Year" || chart.YUnit != "USD" ||
			len(chart.Element) != 1 || chart.Element[0].Label != "growth" || len(chart.Element[0].Points) != 3 ||
			chart.Element[0].Points[2] != [2]float64{3, 9} {
			t.Errorf("chart %s", res[0].Chart)
		}
	})

	t.Run("bar and pie", func(t *testing.T) {
		r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: `
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.bar(["a", "b", "c"], [3, 1, 2], label="sales")
plt.show()
fig, ax = plt.subplots()
ax.pie([1, 3], labels=["x", "y"])
plt.show()
`})
		res := r.results()
		if len(res) != 2 {
			t.Fatalf("results %d", len(res))
		}
		var bar, pie struct {
			Type     string            `json:"type"`
			Elements []json.RawMessage `json:"elements"`
		}
		_ = json.Unmarshal(res[0].Chart, &bar)
		_ = json.Unmarshal(res[1].Chart, &pie)
		if bar.Type != "bar" || len(bar.Elements) != 3 || !strings.Contains(string(bar.Elements[0]), `"label": "a"`) && !strings.Contains(string(bar.Elements[0]), `"label":"a"`) {
			t.Errorf("bar chart %s", res[0].Chart)
		}
		if pie.Type != "pie" || len(pie.Elements) != 2 {
			t.Errorf("pie chart %s", res[1].Chart)
		}
	})

	t.Run("scatter, box and several axes", func(t *testing.T) {
		r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: `
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.scatter([1, 2, 3], [3, 1, 2], label="pts")
plt.show()
fig, ax = plt.subplots()
ax.boxplot([[1, 2, 3, 4, 5, 30], [2, 3, 4]])
ax.set_xticklabels(["a", "b"])
plt.show()
fig, (a1, a2) = plt.subplots(1, 2)
a1.plot([1, 2], [1, 4])
a2.bar(["x"], [1])
fig.suptitle("Both")
plt.show()
`})
		res := r.results()
		if len(res) != 3 {
			t.Fatalf("results %d", len(res))
		}
		var sc, box, sup struct {
			Type     string `json:"type"`
			Title    string `json:"title"`
			Elements []map[string]any
		}
		_ = json.Unmarshal(res[0].Chart, &sc)
		_ = json.Unmarshal(res[1].Chart, &box)
		_ = json.Unmarshal(res[2].Chart, &sup)
		if sc.Type != "scatter" || len(sc.Elements) != 1 || sc.Elements[0]["label"] != "pts" || len(sc.Elements[0]["points"].([]any)) != 3 {
			t.Errorf("scatter %s", res[0].Chart)
		}
		if box.Type != "box_and_whisker" || len(box.Elements) != 2 || box.Elements[0]["label"] != "a" ||
			box.Elements[0]["median"] != 3.5 || len(box.Elements[0]["outliers"].([]any)) != 1 {
			t.Errorf("box %s", res[1].Chart)
		}
		if sup.Type != "superchart" || sup.Title != "Both" || len(sup.Elements) != 2 || sup.Elements[0]["type"] != "line" || sup.Elements[1]["type"] != "bar" {
			t.Errorf("superchart %s", res[2].Chart)
		}
	})

	t.Run("dataframe", func(t *testing.T) {
		r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: `
import pandas as pd
df = pd.DataFrame({"name": ["ann", "bob"], "age": [31, 42], "score": [1.5, float("nan")],
                   "when": pd.to_datetime(["2024-01-02", "2024-03-04"])})
df`})
		m := r.main()
		if m == nil {
			t.Fatal("no main result")
		}
		var html string
		_ = json.Unmarshal(m.Bundle["text/html"], &html)
		if !strings.Contains(html, "<table") || !strings.Contains(html, "bob") {
			t.Errorf("html %q", trunc(html, 200))
		}
		var data map[string][]any
		if err := json.Unmarshal(m.Data, &data); err != nil {
			t.Fatalf("data %s: %v", m.Data, err)
		}
		if len(data["name"]) != 2 || data["name"][1] != "bob" || data["age"][1] != float64(42) || data["score"][1] != nil ||
			!strings.HasPrefix(data["when"][0].(string), "2024-01-02") {
			t.Errorf("data %s", m.Data)
		}
	})

	t.Run("mime bundles", func(t *testing.T) {
		r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: `
from IPython.display import display, HTML, Markdown, SVG, Latex, JSON, Javascript
display(HTML("<b>b</b>"), Markdown("# m"), SVG('<svg xmlns="http://www.w3.org/2000/svg"/>'), Latex(r"$x^2$"),
        JSON({"k": [1, 2]}), Javascript("1"))
display({"image/jpeg": "AAAA", "application/pdf": "JVBERg=="}, raw=True)
{"a": 1}`})
		want := []string{"text/html", "text/markdown", "image/svg+xml", "text/latex", "application/json", "application/javascript"}
		seen := map[string]bool{}
		for _, res := range r.results() {
			for k := range res.Bundle {
				seen[k] = true
			}
		}
		for _, w := range append(want, "image/jpeg", "application/pdf") {
			if !seen[w] {
				t.Errorf("no %s in any result", w)
			}
		}
		var dict map[string]int
		if m := r.main(); m == nil || json.Unmarshal(m.Bundle["application/json"], &dict) != nil || dict["a"] != 1 {
			t.Errorf("dict result: %+v", m)
		}
	})
}

func keys(m map[string]json.RawMessage) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	return k
}

func TestPythonStreamingOrder(t *testing.T) {
	needPython(t)
	s := newSup(t, nil)
	var times []time.Time
	var order []string
	err := s.Execute(context.Background(), codewire.ExecuteRequest{Code: `
import sys, time
from IPython.display import display
print("one", flush=True)
time.sleep(0.3)
print("err", file=sys.stderr, flush=True)
display("shown")
print("two")
"last"`}, func(e codewire.Event) error {
		times = append(times, time.Now())
		switch e.Type {
		case codewire.EventStdout, codewire.EventStderr:
			order = append(order, e.Type+":"+strings.TrimSpace(e.Text))
		case codewire.EventResult:
			order = append(order, "result:"+string(e.Result.Bundle["text/plain"]))
		default:
			order = append(order, e.Type)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"start", "stdout:one", "stderr:err", `result:"'shown'"`, "stdout:two", `result:"'last'"`, "end"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Fatalf("order\n got %v\nwant %v", order, want)
	}
	// "one" was streamed as it came, before the sleep ended.
	if d := times[len(times)-1].Sub(times[1]); d < 250*time.Millisecond {
		t.Errorf("stdout was not streamed before the cell ended (%v between them)", d)
	}
}
