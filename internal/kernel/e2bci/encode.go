package e2bci

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Encoder turns a Paddock execution stream into E2B's NDJSON lines.
type Encoder struct {
	w       *bufio.Writer
	flush   func()
	now     func() time.Time
	errSent bool
	ended   bool
}

// NewEncoder writes to w; flush (may be nil) is called after every event so
// that lines reach the client as they come.
func NewEncoder(w io.Writer, flush func()) *Encoder {
	return &Encoder{w: bufio.NewWriterSize(w, 32<<10), flush: flush, now: time.Now}
}

// Event encodes one event; the end event becomes the execution count and
// end_of_execution lines.
func (e *Encoder) Event(ev codewire.Event) error {
	switch ev.Type {
	case codewire.EventStdout, codewire.EventStderr:
		if err := e.line(Log{Type: ev.Type, Text: ev.Text, Timestamp: e.now().UTC().Format("2006-01-02T15:04:05.000000Z07:00")}); err != nil {
			return err
		}
	case codewire.EventResult:
		if ev.Result != nil {
			if err := e.line(ConvertResult(ev.Result)); err != nil {
				return err
			}
		}
	case codewire.EventError:
		if ev.Error != nil {
			e.errSent = true
			if err := e.line(Error{Type: TypeError, Name: ev.Error.Name, Value: ev.Error.Value, Traceback: ev.Error.Traceback}); err != nil {
				return err
			}
		}
	case codewire.EventEnd:
		if ev.End != nil {
			if err := e.end(ev.End); err != nil {
				return err
			}
		}
	default:
		return nil // start: E2B's stream has no such line
	}
	return e.sync()
}

func (e *Encoder) end(end *codewire.End) error {
	if end.Status != codewire.StatusOK && !e.errSent {
		// A cell that failed without an error of its own (a bash command's
		// exit status, a cut-off stream): E2B's clients look for an error.
		x := Error{Type: TypeError, Name: "ExecutionError", Value: end.Message}
		if end.ExitCode != nil {
			x.Name, x.Value = "ExitError", fmt.Sprintf("exit status %d", *end.ExitCode)
		}
		if x.Value == "" {
			x.Value = "the cell ended with status " + end.Status
		}
		if err := e.line(x); err != nil {
			return err
		}
	}
	if end.ExecutionCount > 0 {
		if err := e.line(NumberOfExecutions{Type: TypeNumberOfExecutions, ExecutionCount: end.ExecutionCount}); err != nil {
			return err
		}
	}
	return e.Close()
}

// Close writes end_of_execution (once); E2B's server ends every stream
// with it.
func (e *Encoder) Close() error {
	if e.ended {
		return nil
	}
	e.ended = true
	if err := e.line(EndOfExecution{Type: TypeEndOfExecution}); err != nil {
		return err
	}
	return e.sync()
}

// line writes v and a newline; HTML is not escaped (E2B's server does
// not, and a table or SVG then stays readable and small).
func (e *Encoder) line(v any) error {
	enc := json.NewEncoder(e.w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (e *Encoder) sync() error {
	if err := e.w.Flush(); err != nil {
		return err
	}
	if e.flush != nil {
		e.flush()
	}
	return nil
}

// ConvertResult spreads a MIME bundle into E2B's named fields. A
// string-valued text/plain wrapped in single quotes loses them, as E2B's
// server does (a Python str result shows as its content).
func ConvertResult(r *codewire.Result) Result {
	out := Result{Type: TypeResult, IsMainResult: r.IsMain, Data: r.Data, Chart: r.Chart}
	str := func(raw json.RawMessage) (*string, bool) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return &s, true
	}
	for mime, raw := range r.Bundle {
		var field **string
		switch mime {
		case "text/plain":
			field = &out.Text
		case "text/html":
			field = &out.HTML
		case "text/markdown":
			field = &out.Markdown
		case "image/svg+xml":
			field = &out.SVG
		case "image/png":
			field = &out.PNG
		case "image/jpeg":
			field = &out.JPEG
		case "application/pdf":
			field = &out.PDF
		case "text/latex":
			field = &out.LaTeX
		case "application/javascript":
			field = &out.JavaScript
		case "application/json":
			out.JSON = raw
			continue
		}
		if field != nil {
			if s, ok := str(raw); ok {
				*field = s
				continue
			}
		}
		if out.Extra == nil {
			out.Extra = map[string]json.RawMessage{}
		}
		out.Extra[mime] = raw
	}
	if out.Text != nil {
		if t := *out.Text; len(t) >= 2 && strings.HasPrefix(t, "'") && strings.HasSuffix(t, "'") {
			t = t[1 : len(t)-1]
			out.Text = &t
		}
	}
	if len(r.Omitted) > 0 {
		if out.Extra == nil {
			out.Extra = map[string]json.RawMessage{}
		}
		b, _ := json.Marshal(r.Omitted)
		out.Extra["paddock/omitted"] = b
	}
	return out
}
