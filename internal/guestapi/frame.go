package guestapi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame types.
const (
	FrameStdout  byte = 'o'
	FrameStderr  byte = 'e'
	FrameStarted byte = 's' // JSON {"pid":N}
	FrameExit    byte = 'x' // JSON ExecResult
	FrameError   byte = 'E' // JSON Error
)

// MaxFrame bounds one frame's payload; writers split larger chunks.
const MaxFrame = 1 << 20

// ErrFrameTooLarge is returned by ReadFrame for an oversized length.
var ErrFrameTooLarge = errors.New("guestapi: frame too large")

// WriteFrame writes one frame. It does not flush.
func WriteFrame(w io.Writer, typ byte, payload []byte) error {
	for {
		n := len(payload)
		if n > MaxFrame {
			n = MaxFrame
		}
		var hdr [5]byte
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

// Next returns the next frame. The payload is valid until the next call.
func (f *FrameReader) Next() (typ byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, n)
	}
	if cap(f.buf) < int(n) {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], f.buf, nil
}
