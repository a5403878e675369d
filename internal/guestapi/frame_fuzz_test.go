package guestapi

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzFrameReader: a frame stream from a guest (which the host does not
// trust: the sandbox controls its agent's process once compromised).
// Reading never panics, never returns a payload over MaxFrame, and what
// WriteFrame wrote reads back unchanged.
func FuzzFrameReader(f *testing.F) {
	var seed bytes.Buffer
	_ = WriteFrame(&seed, FrameStdout, []byte("hello"))
	_ = WriteFrame(&seed, FrameExit, []byte(`{"exit_code":0}`))
	f.Add(seed.Bytes(), byte('o'), []byte("x"))
	f.Add([]byte{'o', 0xff, 0xff, 0xff, 0xff}, byte('e'), []byte{})
	f.Add([]byte{'o', 0, 0, 0, 9, 'a'}, byte('x'), bytes.Repeat([]byte{0}, 70000))
	f.Add([]byte{}, byte(0), []byte(nil))
	f.Fuzz(func(t *testing.T, stream []byte, typ byte, payload []byte) {
		r := NewFrameReader(bytes.NewReader(stream))
		for i := 0; i < 1000; i++ {
			_, p, err := r.Next()
			if err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrFrameTooLarge) {
					break
				}
				break
			}
			if len(p) > MaxFrame {
				t.Fatalf("a %d-byte payload", len(p))
			}
		}
		var buf bytes.Buffer
		if err := WriteFrame(&buf, typ, payload); err != nil {
			t.Fatal(err)
		}
		var got []byte
		r = NewFrameReader(&buf)
		for {
			ty, p, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("reading back: %v", err)
			}
			if ty != typ {
				t.Fatalf("type %q read back as %q", typ, ty)
			}
			got = append(got, p...)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("payload changed: %d bytes → %d", len(payload), len(got))
		}
	})
}
