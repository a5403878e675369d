package codewire

import (
	"encoding/json"
	"strings"
)

// Execution is a whole stream gathered into one value: the answer of a
// non-streaming request, and what the Go client, the CLI and the MCP tool
// build from a stream.
type Execution struct {
	Start   *Start     `json:"start,omitempty"`
	Stdout  string     `json:"stdout"`
	Stderr  string     `json:"stderr"`
	Results []*Result  `json:"results"`
	Error   *ExecError `json:"error,omitempty"`
	End     *End       `json:"end,omitempty"`
}

// Add folds one event into e.
func (e *Execution) Add(ev Event) {
	switch ev.Type {
	case EventStart:
		e.Start = ev.Start
	case EventStdout:
		e.Stdout += ev.Text
	case EventStderr:
		e.Stderr += ev.Text
	case EventResult:
		if ev.Result != nil {
			e.Results = append(e.Results, ev.Result)
		}
	case EventError:
		if ev.Error != nil && e.Error == nil {
			e.Error = ev.Error // the first: later ones follow from it
		}
	case EventEnd:
		e.End = ev.End
	}
}

// Main is the cell's final value, or nil.
func (e *Execution) Main() *Result {
	for _, r := range e.Results {
		if r.IsMain {
			return r
		}
	}
	return nil
}

// Text is the text/plain of the final value ("" when there is none).
func (e *Execution) Text() string {
	m := e.Main()
	if m == nil {
		return ""
	}
	raw, ok := m.Bundle["text/plain"]
	if !ok {
		return ""
	}
	s := string(raw)
	if strings.HasPrefix(s, `"`) {
		var out string
		if err := json.Unmarshal(raw, &out); err == nil {
			return out
		}
	}
	return s
}
