package e2bci

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// The golden file is what E2B's server sends for the same cell, field by
// field as the SDK's parseOutput and Result read them (type; text, html,
// markdown, svg, png, jpeg, pdf, latex, json, javascript, data, chart,
// extra, is_main_result; name, value, traceback; execution_count).
func TestEncoderGolden(t *testing.T) {
	count := 3
	exit := 2
	cases := map[string][]codewire.Event{
		"execute": {
			{Type: codewire.EventStart, Start: &codewire.Start{Context: "c1", Language: "python"}},
			{Type: codewire.EventStdout, Text: "hello\n"},
			{Type: codewire.EventStderr, Text: "warn\n"},
			{Type: codewire.EventResult, Result: &codewire.Result{Bundle: map[string]json.RawMessage{
				"text/plain": raw(`"<Figure size 640x480 with 1 Axes>"`), "image/png": raw(`"iVBORw0KGgo="`),
				"image/svg+xml": raw(`"<svg/>"`), "application/x-custom": raw(`{"k":1}`)},
				Chart: raw(`{"type":"bar","title":"T","elements":[{"label":"a","group":"Group 1","value":3}]}`)}},
			{Type: codewire.EventResult, Result: &codewire.Result{IsMain: true, ExecutionCount: count, Bundle: map[string]json.RawMessage{
				"text/plain": raw(`"'quoted'"`), "text/html": raw(`"<table></table>"`), "text/markdown": raw(`"# m"`),
				"text/latex": raw(`"$x$"`), "application/json": raw(`{"a":[1,2]}`), "application/javascript": raw(`"1"`),
				"image/jpeg": raw(`"/9j/"`), "application/pdf": raw(`"JVBE"`)},
				Data: raw(`{"a":[1,2]}`)}},
			{Type: codewire.EventEnd, End: &codewire.End{Status: codewire.StatusOK, ExecutionCount: count}},
		},
		"error": {
			{Type: codewire.EventStart, Start: &codewire.Start{Context: "c1", Language: "python"}},
			{Type: codewire.EventError, Error: &codewire.ExecError{Name: "ZeroDivisionError", Value: "division by zero", Traceback: "Traceback...\nZeroDivisionError: division by zero"}},
			{Type: codewire.EventEnd, End: &codewire.End{Status: codewire.StatusError, ExecutionCount: 4}},
		},
		"bash-exit": {
			{Type: codewire.EventStart, Start: &codewire.Start{Context: "c2", Language: "bash"}},
			{Type: codewire.EventStdout, Text: "x\n"},
			{Type: codewire.EventEnd, End: &codewire.End{Status: codewire.StatusError, ExitCode: &exit, ExecutionCount: 1}},
		},
		"omitted": {
			{Type: codewire.EventResult, Result: &codewire.Result{Bundle: map[string]json.RawMessage{"text/plain": raw(`"<Figure>"`)},
				Omitted: []codewire.Omission{{MIME: "image/png", Bytes: 9000000, Reason: "larger than the image cap of 8388608 bytes"}}}},
			{Type: codewire.EventEnd, End: &codewire.End{Status: codewire.StatusOK, Truncated: true}},
		},
	}
	for name, events := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := NewEncoder(&buf, nil)
			enc.now = func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 123456000, time.UTC) }
			for _, ev := range events {
				if err := enc.Event(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.Close(); err != nil { // a second end is not written
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".golden.ndjson")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s:\n got %s\nwant %s", name, buf.Bytes(), want)
			}
			// Every line is a JSON object with a type, and the stream
			// ends with end_of_execution, once.
			lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
			for i, l := range lines {
				var m struct {
					Type string `json:"type"`
				}
				if err := json.Unmarshal(l, &m); err != nil || m.Type == "" {
					t.Errorf("line %d %s: %v", i, l, err)
				}
				if (m.Type == TypeEndOfExecution) != (i == len(lines)-1) {
					t.Errorf("end_of_execution at line %d of %d", i, len(lines))
				}
			}
		})
	}
}
