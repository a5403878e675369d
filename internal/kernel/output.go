package kernel

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Limits bound what one context and one cell may use. Zero fields take
// the defaults of DefaultLimits.
type Limits struct {
	// MaxOutputBytes caps the stdout and stderr text of one cell
	// together; past it output is dropped and the end event says
	// truncated.
	MaxOutputBytes int
	// MaxImageBytes caps one image or PDF (as the kernel encodes it,
	// base64): a bigger one is left out of its result with a reason.
	MaxImageBytes int
	// MaxResultBytes caps the representations of one result together.
	MaxResultBytes int
	// MaxResults caps the results (displays) of one cell.
	MaxResults int
	// MaxCodeBytes caps the code of one cell.
	MaxCodeBytes int
	// MaxQueue caps the cells waiting in one context.
	MaxQueue int
	// MaxContexts caps the contexts of one supervisor.
	MaxContexts int
}

// DefaultLimits are the limits used where a field of Limits is zero.
var DefaultLimits = Limits{
	MaxOutputBytes: 1 << 20,
	MaxImageBytes:  8 << 20,
	MaxResultBytes: 16 << 20,
	MaxResults:     100,
	MaxCodeBytes:   1 << 20,
	MaxQueue:       16,
	MaxContexts:    32,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return Limits{
		MaxOutputBytes: pick(l.MaxOutputBytes, d.MaxOutputBytes),
		MaxImageBytes:  pick(l.MaxImageBytes, d.MaxImageBytes),
		MaxResultBytes: pick(l.MaxResultBytes, d.MaxResultBytes),
		MaxResults:     pick(l.MaxResults, d.MaxResults),
		MaxCodeBytes:   pick(l.MaxCodeBytes, d.MaxCodeBytes),
		MaxQueue:       pick(l.MaxQueue, d.MaxQueue),
		MaxContexts:    pick(l.MaxContexts, d.MaxContexts),
	}
}

// binaryMIME are the representations that are base64 of binary data: the
// image cap applies to them.
var binaryMIME = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/bmp": true,
	"application/pdf": true,
}

// Keys of the structured representations the Python startup snippet adds;
// they are moved out of the bundle into Result.Chart and Result.Data.
const (
	mimeChart = "application/vnd.paddock.chart+json"
	mimeData  = "application/vnd.paddock.data+json"
)

// cellOut collects the events of one cell from the engine (which may push
// from any goroutine and must never block), applies the caps, and hands
// them to the caller's goroutine in order.
type cellOut struct {
	lim Limits

	mu        sync.Mutex
	events    []codewire.Event
	notify    chan struct{}
	outBytes  int
	results   int
	truncated bool
	noticed   bool
	carry     map[string][]byte // incomplete UTF-8 sequences, per raw stream
	execCount int
}

func newCellOut(lim Limits) *cellOut {
	return &cellOut{lim: lim, notify: make(chan struct{}, 1)}
}

func (o *cellOut) wake() {
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// take returns the events pushed so far.
func (o *cellOut) take() []codewire.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	ev := o.events
	o.events = nil
	return ev
}

// stream adds stdout or stderr text (already valid UTF-8, or not: it is
// repaired).
func (o *cellOut) stream(name, text string) {
	if text == "" {
		return
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.streamLocked(name, text)
}

func (o *cellOut) streamLocked(name, text string) {
	room := o.lim.MaxOutputBytes - o.outBytes
	if room <= 0 {
		o.truncateLocked(len(text))
		return
	}
	if len(text) > room {
		cut := room
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		o.truncateLocked(len(text) - cut)
		text = text[:cut]
	}
	o.outBytes += len(text)
	// Adjacent text of one stream is merged: a loop of prints becomes a
	// few events, not thousands.
	if n := len(o.events); n > 0 && o.events[n-1].Type == name && len(o.events[n-1].Text) < 64<<10 {
		o.events[n-1].Text += text
	} else {
		o.events = append(o.events, codewire.Event{Type: name, Text: text})
	}
	o.wake()
}

// raw adds bytes read from a process's stdout or stderr, which may split a
// UTF-8 sequence between two reads or not be UTF-8 at all.
func (o *cellOut) raw(name string, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.carry == nil {
		o.carry = map[string][]byte{}
	}
	if c := o.carry[name]; len(c) > 0 {
		b = append(c, b...)
		o.carry[name] = nil
	}
	// Keep back a trailing incomplete sequence (at most 3 bytes) for the
	// next read.
	if n := len(b); n > 0 {
		for i := 1; i <= 3 && i <= n; i++ {
			if utf8.RuneStart(b[n-i]) {
				if !utf8.FullRune(b[n-i:]) {
					o.carry[name] = append([]byte(nil), b[n-i:]...)
					b = b[:n-i]
				}
				break
			}
		}
	}
	if len(b) == 0 {
		return
	}
	o.streamLocked(name, strings.ToValidUTF8(string(b), "\uFFFD"))
}

// flushRaw emits what raw kept back (an incomplete sequence at the end of
// the output).
func (o *cellOut) flushRaw() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for name, c := range o.carry {
		if len(c) > 0 {
			o.carry[name] = nil
			o.streamLocked(name, strings.ToValidUTF8(string(c), "\uFFFD"))
		}
	}
}

func (o *cellOut) truncateLocked(n int) {
	o.truncated = true
	if !o.noticed {
		o.noticed = true
		o.events = append(o.events, codewire.Event{Type: codewire.EventStderr,
			Text: fmt.Sprintf("\n[paddock: output over %d bytes was dropped]\n", o.lim.MaxOutputBytes)})
		o.wake()
	}
}

// markTruncated records output lost elsewhere (a message over the frame
// limit).
func (o *cellOut) markTruncated() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.truncateLocked(0)
}

// result adds a rich result from a MIME bundle.
func (o *cellOut) result(main bool, bundle map[string]json.RawMessage, count int) {
	r := &codewire.Result{IsMain: main, Bundle: bundle}
	if main {
		r.ExecutionCount = count
	}
	if c, ok := bundle[mimeChart]; ok {
		delete(bundle, mimeChart)
		if len(c) > 2 && string(c) != "null" {
			r.Chart = c
		}
	}
	if d, ok := bundle[mimeData]; ok {
		delete(bundle, mimeData)
		if len(d) > 2 && string(d) != "null" {
			r.Data = d
		}
	}
	o.capResult(r)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.results >= o.lim.MaxResults {
		o.truncated = true
		return
	}
	o.results++
	o.events = append(o.events, codewire.Event{Type: codewire.EventResult, Result: r})
	o.wake()
}

// capResult leaves out images over the image cap, then the largest
// representations (text/plain last) until the result fits its cap.
func (o *cellOut) capResult(r *codewire.Result) {
	total := len(r.Chart) + len(r.Data)
	for mime, v := range r.Bundle {
		if binaryMIME[mime] && len(v) > o.lim.MaxImageBytes {
			delete(r.Bundle, mime)
			r.Omitted = append(r.Omitted, codewire.Omission{MIME: mime, Bytes: len(v),
				Reason: fmt.Sprintf("larger than the image cap of %d bytes", o.lim.MaxImageBytes)})
			continue
		}
		total += len(v)
	}
	for total > o.lim.MaxResultBytes {
		var big string
		for mime, v := range r.Bundle {
			if mime == "text/plain" && len(r.Bundle) > 1 {
				continue
			}
			if big == "" || len(v) > len(r.Bundle[big]) {
				big = mime
			}
		}
		if big == "" {
			if len(r.Data) > 0 {
				total -= len(r.Data)
				r.Omitted = append(r.Omitted, codewire.Omission{MIME: mimeData, Bytes: len(r.Data), Reason: "result over its size cap"})
				r.Data = nil
				continue
			}
			break
		}
		n := len(r.Bundle[big])
		delete(r.Bundle, big)
		total -= n
		r.Omitted = append(r.Omitted, codewire.Omission{MIME: big, Bytes: n,
			Reason: fmt.Sprintf("result over its size cap of %d bytes", o.lim.MaxResultBytes)})
	}
}

// fail adds an error event.
func (o *cellOut) fail(e codewire.ExecError) {
	if !utf8.ValidString(e.Traceback) {
		e.Traceback = strings.ToValidUTF8(e.Traceback, "\uFFFD")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, codewire.Event{Type: codewire.EventError, Error: &e})
	o.wake()
}

func (o *cellOut) isTruncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.truncated
}
