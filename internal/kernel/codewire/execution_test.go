package codewire

import (
	"encoding/json"
	"testing"
)

func TestExecutionAdd(t *testing.T) {
	var e Execution
	for _, ev := range []Event{
		{Type: EventStart, Start: &Start{Context: "c", Language: Python}},
		{Type: EventStdout, Text: "a"},
		{Type: EventStderr, Text: "w"},
		{Type: EventStdout, Text: "b"},
		{Type: EventResult, Result: &Result{Bundle: map[string]json.RawMessage{"image/png": json.RawMessage(`"x"`)}}},
		{Type: EventResult, Result: &Result{IsMain: true, Bundle: map[string]json.RawMessage{"text/plain": json.RawMessage(`"42 \"q\""`)}}},
		{Type: EventError, Error: &ExecError{Name: "First"}},
		{Type: EventError, Error: &ExecError{Name: "Second"}},
		{Type: EventEnd, End: &End{Status: StatusError}},
	} {
		e.Add(ev)
	}
	if e.Stdout != "ab" || e.Stderr != "w" || len(e.Results) != 2 || e.Text() != `42 "q"` || e.Error.Name != "First" ||
		e.End.Status != StatusError || e.Start.Context != "c" {
		t.Fatalf("%+v text %q", e, e.Text())
	}
	if (&Execution{}).Text() != "" {
		t.Error("empty execution has text")
	}
}
