package guestapi

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/paddockhq/paddock/internal/errs"
)

// The codec: one shape for every guest route (the table is in doc.go).
//
// A request's body is one head frame (the request as JSON) followed, on
// the routes that take one, by raw bytes to the end of the body: a file's
// content, an archive, a command's input. An answer is frames only: the
// first is a head frame (the answer, or a stream's head) or an error
// frame; a stream goes on with its data, output or event frames and ends
// with an end frame (its result) or an error frame. Frames are one type
// byte, a 4-byte big-endian payload length, and the payload.

// Frame types.
const (
	FrameHead     byte = 'h' // JSON: a request, an answer, or the head of a stream
	FrameData     byte = 'd' // bytes of a download (file, archive, listing)
	FrameEvent    byte = 'v' // JSON FileEvent (watch)
	FrameStdout   byte = 'o' // output bytes
	FrameStderr   byte = 'e' //
	FramePTY      byte = 't' // terminal output
	FramePosition byte = 'p' // JSON Position (process output)
	FrameStdin    byte = 'i' // host → guest on an attachment: input bytes
	FrameControl  byte = 'c' // host → guest on an attachment: JSON Control
	FrameEnd      byte = 'x' // JSON: the last frame of a stream (its result)
	FrameError    byte = 'E' // JSON Error: the last frame of a failed answer
)

// FrameExit is the end frame of exec and process streams.
const FrameExit = FrameEnd

// FrameHeaderLen is the size of a frame's type and length.
const FrameHeaderLen = 5

// MaxFrame bounds a data, output or event frame's payload; writers split
// larger chunks. Heads have per-route bounds (MaxHead by default).
const MaxFrame = 1 << 20

// MaxHead bounds a request head unless its route says otherwise.
const MaxHead = 1 << 20

// Bounds of an answer head the host reads: most are small (a FileInfo,
// a ProcessInfo with its environment); a find, a search or the process
// list can be large (MaxSearchLimit long lines is the largest).
const (
	maxAnswerHead      = 64 << 20
	maxLargeAnswerHead = 1 << 30
)

// ErrFrameTooLarge is returned for a frame longer than its bound.
var ErrFrameTooLarge = errors.New("guestapi: frame too large")

// AppendFrame appends one frame of any length up to 4 GiB (a head is
// never split).
func AppendFrame(b []byte, typ byte, payload []byte) []byte {
	b = append(b, typ, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b[len(b)-4:], uint32(len(payload)))
	return append(b, payload...)
}

// AppendHead appends v as a head frame.
func AppendHead(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return AppendFrame(b, FrameHead, j), nil
}

// WriteFrame writes payload as frames of type typ, split at MaxFrame. It
// does not flush.
func WriteFrame(w io.Writer, typ byte, payload []byte) error {
	for {
		n := min(len(payload), MaxFrame)
		var hdr [FrameHeaderLen]byte
		hdr[0] = typ
		binary.BigEndian.PutUint32(hdr[1:], uint32(n))
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := w.Write(payload[:n]); err != nil {
			return err
		}
		payload = payload[n:]
		if len(payload) == 0 {
			return nil
		}
	}
}

// FrameReader reads frames, reusing one buffer.
type FrameReader struct {
	r   io.Reader
	buf []byte
}

// NewFrameReader wraps r.
func NewFrameReader(r io.Reader) *FrameReader { return &FrameReader{r: r} }

// Next returns the next frame of at most MaxFrame bytes. The payload is
// valid until the next call.
func (f *FrameReader) Next() (typ byte, payload []byte, err error) { return f.NextMax(MaxFrame) }

// NextMax is Next with another bound on the payload.
func (f *FrameReader) NextMax(max int) (typ byte, payload []byte, err error) {
	typ, n, err := f.header()
	if err != nil {
		return 0, nil, err
	}
	if n > max {
		return 0, nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrFrameTooLarge, n, max)
	}
	f.buf, err = readPayload(f.r, f.buf, n)
	if err != nil {
		return 0, nil, err
	}
	return typ, f.buf, nil
}

func (f *FrameReader) header() (byte, int, error) {
	var hdr [FrameHeaderLen]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return 0, 0, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if uint64(n) > uint64(maxInt) {
		return 0, 0, fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, n)
	}
	return hdr[0], int(n), nil
}

const maxInt = int(^uint(0) >> 1)

// growStep is how much of a payload is allocated before its bytes arrive:
// a length is only a claim, and a peer that claims a gigabyte and sends
// five bytes must not get a gigabyte allocated (memory exhaustion by a
// forged length).
const growStep = 256 << 10

// readPayload reads n bytes into buf (reused if large enough).
func readPayload(r io.Reader, buf []byte, n int) ([]byte, error) {
	if n <= cap(buf) {
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return buf[:0], unexpected(err)
		}
		return buf, nil
	}
	buf = buf[:0]
	for len(buf) < n {
		step := min(n-len(buf), max(len(buf), growStep))
		buf = slices.Grow(buf, step)
		got := len(buf)
		buf = buf[:got+step]
		if _, err := io.ReadFull(r, buf[got:]); err != nil {
			return buf[:0], unexpected(err)
		}
	}
	return buf, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ReadHead reads a request's head frame (at most max bytes of JSON) from
// r, and no byte more: what follows in r is the request's raw body.
func ReadHead(r io.Reader, max int, v any) error {
	f := FrameReader{r: r}
	typ, n, err := f.header()
	if err != nil {
		return errs.Wrap(errs.CodeInvalid, err, "the request has no head frame")
	}
	if typ != FrameHead {
		return errs.Invalid("the request does not start with a head frame")
	}
	if n > max {
		return errs.New(errs.CodeTooLarge, "the request head is over %d bytes", max)
	}
	b, err := readPayload(r, nil, n)
	if err != nil {
		return errs.Wrap(errs.CodeInvalid, err, "the request head was cut short")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errs.Wrap(errs.CodeInvalid, err, "malformed request head")
	}
	return nil
}

// ErrorOf is the error frame's content for err: its code and public
// message (never its cause, which may name host paths).
func ErrorOf(err error) Error {
	e := Error{Code: string(errs.CodeOf(err)), Message: errs.Public(err)}
	if re, ok := IsRange(err); ok {
		size := re.Size
		e.RangeSize = &size
	}
	return e
}

// AsError turns a received error frame into the error it stands for.
func AsError(p []byte) error {
	var e Error
	if json.Unmarshal(p, &e) != nil || e.Code == "" {
		return errs.New(errs.CodeUnavailable, "sandbox agent sent a malformed error")
	}
	return e.asErr()
}

func (e Error) asErr() error {
	code := errs.Code(e.Code)
	if code == "" {
		code = errs.CodeInternal
	}
	err := &errs.Error{Code: code, Msg: e.Message}
	if e.RangeSize != nil {
		return &RangeError{Size: *e.RangeSize, Err: err}
	}
	return err
}

// FrameWriter writes frames from several goroutines onto one stream. It
// buffers and flushes after every frame unless told otherwise, so output
// reaches the other side as it is produced. After a write error every call
// returns that error.
type FrameWriter struct {
	mu    sync.Mutex
	w     *bufio.Writer
	flush func() // after the buffer is flushed (an http.Flusher's), or nil
	err   error
}

// NewFrameWriter buffers size bytes in front of w; flush, if set, runs after
// every flush of the buffer.
func NewFrameWriter(w io.Writer, size int, flush func()) *FrameWriter {
	return &FrameWriter{w: bufio.NewWriterSize(w, size), flush: flush}
}

// Send writes payload as frames of type typ (split at MaxFrame) and flushes.
func (f *FrameWriter) Send(typ byte, payload []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = WriteFrame(f.w, typ, payload)
	}
	return f.flushLocked()
}

// Queue writes payload as frames of type typ (split at MaxFrame) without
// flushing.
func (f *FrameWriter) Queue(typ byte, payload []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = WriteFrame(f.w, typ, payload)
	}
	return f.err
}

// SendJSON writes v as one frame of type typ and flushes.
func (f *FrameWriter) SendJSON(typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		_, f.err = f.w.Write(AppendFrame(nil, typ, b))
	}
	return f.flushLocked()
}

// SendOwned writes one frame whose payload is buf[FrameHeaderLen:], using
// buf[:FrameHeaderLen] for the header, in one write (no copy when the
// buffer is empty, as it is after any flush). The payload must not be
// over MaxFrame. It does not flush: the next write pushes it out, or
// Flush.
func (f *FrameWriter) SendOwned(typ byte, buf []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if len(buf) < FrameHeaderLen || len(buf)-FrameHeaderLen > MaxFrame {
		f.err = ErrFrameTooLarge
		return f.err
	}
	buf[0] = typ
	binary.BigEndian.PutUint32(buf[1:FrameHeaderLen], uint32(len(buf)-FrameHeaderLen))
	_, f.err = f.w.Write(buf)
	return f.err
}

// Flush pushes out what is buffered.
func (f *FrameWriter) Flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flushLocked()
}

func (f *FrameWriter) flushLocked() error {
	if f.err != nil {
		return f.err
	}
	if f.err = f.w.Flush(); f.err == nil && f.flush != nil {
		f.flush()
	}
	return f.err
}

// Err is the first write error, if any.
func (f *FrameWriter) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// DataWriter is an io.Writer that sends what is written as data frames
// (an archive's tar stream), without flushing; the caller ends the stream
// with its end frame.
type DataWriter struct{ F *FrameWriter }

func (d DataWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := d.F.Queue(FrameData, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// dataStream reads the data frames of a download as one stream of bytes,
// straight into the caller's buffer. The end frame is io.EOF (after end
// has seen its payload); an error frame is its error; anything else
// breaks the stream.
type dataStream struct {
	r   *bufio.Reader
	rem int // payload bytes left in the current data frame
	end func(p []byte) error
	err error
}

func (d *dataStream) Read(p []byte) (int, error) {
	for d.rem == 0 {
		if d.err != nil {
			return 0, d.err
		}
		f := FrameReader{r: d.r}
		typ, n, err := f.header()
		if err != nil {
			d.err = unexpected(err)
			return 0, d.err
		}
		switch typ {
		case FrameData:
			if n > MaxFrame {
				d.err = fmt.Errorf("%w: a %d-byte data frame", ErrFrameTooLarge, n)
				return 0, d.err
			}
			d.rem = n
		case FrameEnd, FrameError:
			if n > MaxHead {
				d.err = fmt.Errorf("%w: a %d-byte end frame", ErrFrameTooLarge, n)
				return 0, d.err
			}
			b, err := readPayload(d.r, nil, n)
			switch {
			case err != nil:
				d.err = err
			case typ == FrameError:
				d.err = AsError(b)
			case d.end != nil:
				if d.err = d.end(b); d.err == nil {
					d.err = io.EOF
				}
			default:
				d.err = io.EOF
			}
			return 0, d.err
		default:
			d.err = errs.New(errs.CodeUnavailable, "sandbox agent sent an unexpected frame in a download")
			return 0, d.err
		}
	}
	n, err := d.r.Read(p[:min(len(p), d.rem)])
	d.rem -= n
	if err != nil && d.rem > 0 {
		d.err = unexpected(err)
		if n > 0 {
			return n, nil
		}
		return 0, d.err
	}
	return n, nil
}
