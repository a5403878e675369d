package guestapi

// Code contexts (docs/code.md): stateful Python, JavaScript, TypeScript and
// bash interpreters that the guest runs as sandbox workloads
// (internal/kernel). The shapes are codewire's — the public API's — with
// the user a context runs as added, since only the guest knows it.
//
// An execution is a stream: its head is the start event (where the cell
// runs; after a kernel death, that the state was lost), then one event
// frame per stdout, stderr, result or error event in the order the code
// produced them, then an end frame carrying the end event. A refusal (bad
// input, unknown context, a full queue, a kernel that cannot start) is an
// error frame before any head. Closing the connection interrupts the cell.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Bounds of the code routes.
const (
	// MaxCodeHead bounds an execute or create request: a cell of up to
	// 1 MiB of code (the kernel's cap), JSON-escaped, with its environment.
	MaxCodeHead = 8 << 20
	// MaxCodeEvent bounds one event frame of an execution. A result may
	// hold 16 MiB of representations and an error the traceback of a
	// 32 MiB kernel message (the kernel's caps); the guest shortens an
	// event that would be larger rather than break the stream.
	MaxCodeEvent = 40 << 20
	// MaxCodeStreams bounds the executions streaming at once in a sandbox
	// (queued ones included).
	MaxCodeStreams = 256
	// MaxWarmLanguages bounds a warm request.
	MaxWarmLanguages = 4
)

// CodeCreateRequest is the head of RouteCodeCreate: a context, run as User
// (root or user; "" is root, as for exec).
type CodeCreateRequest struct {
	codewire.CreateContextRequest
	User string `json:"user,omitempty"`
}

// CodeListRequest is the head of RouteCodeList: the contexts of one user,
// or ("") of all.
type CodeListRequest struct {
	User string `json:"user,omitempty"`
}

// CodeContextRequest names a context (get, restart, delete).
type CodeContextRequest struct {
	ID string `json:"id"`
}

// CodeContext is a context and the user it runs as.
type CodeContext struct {
	codewire.Context
	User string `json:"user"`
}

// CodeContextList is the answer of RouteCodeList, oldest first.
type CodeContextList struct {
	Contexts []CodeContext `json:"contexts"`
}

// CodeExecuteRequest is the head of RouteCodeExecute. Without a context
// id the cell runs in the language's default context of User (created on
// first use); with one, User may be left out and must otherwise be the
// context's.
type CodeExecuteRequest struct {
	codewire.ExecuteRequest
	User string `json:"user,omitempty"`
}

// CodeWarmRequest is the head of RouteCodeWarm: start the default context
// of each language for User in the background, so that the first cell
// finds its kernel running. A warm-up that fails is logged; the first cell
// then reports why.
type CodeWarmRequest struct {
	Languages []string `json:"languages"`
	User      string   `json:"user,omitempty"`
}

// CreateCodeContext makes a context and starts its kernel.
func (c *Client) CreateCodeContext(ctx context.Context, req CodeCreateRequest) (CodeContext, error) {
	var out CodeContext
	err := c.unary(ctx, RouteCodeCreate, req, &out)
	return out, err
}

// CodeContexts lists the contexts of user ("" for every user's), oldest
// first.
func (c *Client) CodeContexts(ctx context.Context, user string) ([]CodeContext, error) {
	var out CodeContextList
	err := c.unary(ctx, RouteCodeList, CodeListRequest{User: user}, &out)
	return out.Contexts, err
}

// CodeContext describes one context.
func (c *Client) CodeContext(ctx context.Context, id string) (CodeContext, error) {
	var out CodeContext
	err := c.unary(ctx, RouteCodeGet, CodeContextRequest{ID: id}, &out)
	return out, err
}

// RestartCodeContext replaces a context's kernel by a new one (its state
// is lost, as asked; a running cell is ended).
func (c *Client) RestartCodeContext(ctx context.Context, id string) (CodeContext, error) {
	var out CodeContext
	err := c.unary(ctx, RouteCodeRestart, CodeContextRequest{ID: id}, &out)
	return out, err
}

// DeleteCodeContext ends a context and its kernel.
func (c *Client) DeleteCodeContext(ctx context.Context, id string) error {
	return c.unary(ctx, RouteCodeDelete, CodeContextRequest{ID: id}, nil)
}

// WarmCode starts the default contexts of languages for user in the
// background; it returns once the guest has accepted the request.
func (c *Client) WarmCode(ctx context.Context, req CodeWarmRequest) error {
	return c.unary(ctx, RouteCodeWarm, req, nil)
}

// ExecuteCode runs one cell and calls emit for each event of its stream, in
// order, from the start event to the end event, as kernel.Supervisor's
// Execute does. It returns nil exactly when emit got the end event. A
// refused request returns its error before any event; a stream that breaks
// after the start (the sandbox stopped) returns an unavailable error, and
// the caller ends its own stream. When emit fails, the connection is
// closed — which interrupts the cell in the guest — and its error is
// returned.
func (c *Client) ExecuteCode(ctx context.Context, req CodeExecuteRequest, emit func(codewire.Event) error) error {
	a, err := c.call(ctx, RouteCodeExecute, req, nil, 0, false)
	if err != nil {
		return err
	}
	defer a.close()
	var start codewire.Start
	if err := a.headMax(&start, MaxHead); err != nil {
		return err
	}
	if err := emit(codewire.Event{Type: codewire.EventStart, Start: &start}); err != nil {
		return err
	}
	for {
		typ, p, err := a.fr.NextMax(MaxCodeEvent)
		if err != nil {
			return streamErr(ctx, "code event", err)
		}
		switch typ {
		case FrameEvent:
			ev, err := DecodeCodeEvent(p)
			if err != nil {
				return err
			}
			if err := emit(ev); err != nil {
				return err
			}
		case FrameEnd:
			var end codewire.End
			if err := json.Unmarshal(p, &end); err != nil || end.Status == "" {
				return errs.New(errs.CodeUnavailable, "sandbox agent sent a malformed end of execution")
			}
			return emit(codewire.Event{Type: codewire.EventEnd, End: &end})
		case FrameError:
			return AsError(p)
		default:
			return errs.New(errs.CodeUnavailable, "sandbox agent sent an unknown frame in an execution")
		}
	}
}

// DecodeCodeEvent reads one event frame. The guest is untrusted: only the
// four event types a stream carries between its start and end are
// accepted, each with its own field and nothing else.
func DecodeCodeEvent(p []byte) (codewire.Event, error) {
	var ev codewire.Event
	if err := json.Unmarshal(p, &ev); err != nil {
		return codewire.Event{}, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed code event")
	}
	bad := func() (codewire.Event, error) {
		return codewire.Event{}, errs.New(errs.CodeUnavailable, "sandbox agent sent an unexpected %q code event", clipType(ev.Type))
	}
	switch ev.Type {
	case codewire.EventStdout, codewire.EventStderr:
		return codewire.Event{Type: ev.Type, Text: ev.Text}, nil
	case codewire.EventResult:
		if ev.Result == nil {
			return bad()
		}
		return codewire.Event{Type: ev.Type, Result: ev.Result}, nil
	case codewire.EventError:
		if ev.Error == nil {
			return bad()
		}
		return codewire.Event{Type: ev.Type, Error: ev.Error}, nil
	}
	return bad()
}

func clipType(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	return string(bytes.ToValidUTF8([]byte(s), []byte("?")))
}

// EncodeCodeEvent is the payload of an event frame: ev in JSON without
// HTML escaping (an HTML table would otherwise grow up to six times), at
// most MaxCodeEvent bytes — a larger event is shortened (see
// shrinkCodeEvent) rather than breaking the stream.
func EncodeCodeEvent(ev codewire.Event) ([]byte, error) {
	b, err := marshalNoEscape(ev)
	if err != nil {
		return nil, err
	}
	if len(b) <= MaxCodeEvent {
		return b, nil
	}
	size := len(b)
	if b, err = marshalNoEscape(shrinkCodeEvent(ev, size)); err != nil {
		return nil, err
	}
	if len(b) <= MaxCodeEvent {
		return b, nil
	}
	return marshalNoEscape(stubCodeEvent(ev, size))
}

// stubCodeEvent is the last resort for an event that shortening did not
// bring under the bound: its type and what was lost.
func stubCodeEvent(ev codewire.Event, size int) codewire.Event {
	lost := fmt.Sprintf("[paddock: a %d-byte %s event was too large to send]", size, ev.Type)
	switch {
	case ev.Error != nil:
		return codewire.Event{Type: ev.Type, Error: &codewire.ExecError{Name: clipText(ev.Error.Name, 256, ""), Value: lost}}
	case ev.Result != nil:
		return codewire.Event{Type: ev.Type, Result: &codewire.Result{IsMain: ev.Result.IsMain,
			ExecutionCount: ev.Result.ExecutionCount, Bundle: map[string]json.RawMessage{},
			Omitted: []codewire.Omission{{MIME: "*", Bytes: size, Reason: "the result was too large to send"}}}}
	}
	return codewire.Event{Type: ev.Type, Text: lost}
}

// SendCodeEvent writes ev as one event frame (never split: a reader takes
// one frame for one event) and flushes.
func SendCodeEvent(f *FrameWriter, ev codewire.Event) error {
	b, err := EncodeCodeEvent(ev)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		_, f.err = f.w.Write(AppendFrame(make([]byte, 0, FrameHeaderLen+len(b)), FrameEvent, b))
	}
	return f.flushLocked()
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// codeTextKeep is how much of an over-long text an event keeps.
const codeTextKeep = 1 << 20

// shrinkCodeEvent shortens an event whose encoding took size bytes: an
// error keeps the first MiB of its value and traceback; a result keeps
// its plain text (shortened) and lists the rest as omitted; text keeps
// its first MiB.
func shrinkCodeEvent(ev codewire.Event, size int) codewire.Event {
	note := fmt.Sprintf("\n[paddock: shortened, the event was %d bytes]", size)
	switch {
	case ev.Error != nil:
		e := *ev.Error
		e.Value, e.Traceback = clipText(e.Value, codeTextKeep, note), clipText(e.Traceback, codeTextKeep, note)
		ev.Error = &e
	case ev.Result != nil:
		r := *ev.Result
		r.Bundle = map[string]json.RawMessage{}
		r.Omitted = nil
		for _, o := range ev.Result.Omitted {
			r.Omitted = append(r.Omitted, codewire.Omission{MIME: clipText(o.MIME, 256, "…"), Bytes: o.Bytes, Reason: clipText(o.Reason, 256, "…")})
		}
		for mime, v := range ev.Result.Bundle {
			if mime == "text/plain" {
				var s string
				if json.Unmarshal(v, &s) == nil {
					if short, err := json.Marshal(clipText(s, codeTextKeep, note)); err == nil {
						r.Bundle[mime] = short
						continue
					}
				}
			}
			r.Omitted = append(r.Omitted, codewire.Omission{MIME: clipText(mime, 256, "…"), Bytes: len(v), Reason: "the result was too large to send"})
		}
		for _, x := range []struct {
			mime string
			v    json.RawMessage
		}{{"application/vnd.paddock.chart+json", r.Chart}, {"application/vnd.paddock.data+json", r.Data}} {
			if len(x.v) > 0 {
				r.Omitted = append(r.Omitted, codewire.Omission{MIME: x.mime, Bytes: len(x.v), Reason: "the result was too large to send"})
			}
		}
		r.Chart, r.Data = nil, nil
		if len(r.Omitted) > 1000 {
			r.Omitted = r.Omitted[:1000]
		}
		ev.Result = &r
	default:
		ev.Text = clipText(ev.Text, codeTextKeep, note)
	}
	return ev
}

// clipText keeps the first max bytes of s (whole characters) and adds note.
func clipText(s string, max int, note string) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}
