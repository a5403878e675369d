package jupyter

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func frame(more bool, body []byte) []byte {
	var f byte
	if more {
		f |= flagMore
	}
	if len(body) > 255 {
		f |= flagLong
		h := make([]byte, 9)
		h[0] = f
		binary.BigEndian.PutUint64(h[1:], uint64(len(body)))
		return append(h, body...)
	}
	return append([]byte{f, byte(len(body))}, body...)
}

func greeting() []byte {
	g := make([]byte, zmtpGreeting)
	g[0], g[9] = 0xff, 0x7f
	return g
}

// parseFrames splits a ZMTP byte stream (after the greeting) into frames.
func parseFrames(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		f := b[0]
		var n uint64
		if f&flagLong != 0 {
			n = binary.BigEndian.Uint64(b[1:9])
			b = b[9:]
		} else {
			n = uint64(b[1])
			b = b[2:]
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

func TestFrameLimiter(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3000)
	var in []byte
	in = append(in, greeting()...)
	in = append(in, frame(true, []byte("<IDS|MSG>"))...)
	in = append(in, frame(true, big)...) // over the frame limit: emptied
	in = append(in, frame(false, []byte("tail"))...)
	in = append(in, frame(false, bytes.Repeat([]byte("y"), 900))...) // a new message: passes
	for _, chunk := range []int{1, 7, 64, 100000} {
		l := newFrameLimiter(1000, 1500)
		var out []byte
		for i := 0; i < len(in); i += chunk {
			if err := l.feed(in[i:min(i+chunk, len(in))]); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 13)
			for n := l.take(buf); n > 0; n = l.take(buf) {
				out = append(out, buf[:n]...)
			}
		}
		if !bytes.Equal(out[:zmtpGreeting], greeting()) {
			t.Fatal("greeting changed")
		}
		fr := parseFrames(t, out[zmtpGreeting:])
		if len(fr) != 4 || string(fr[0]) != "<IDS|MSG>" || len(fr[1]) != 0 || string(fr[2]) != "tail" || len(fr[3]) != 900 {
			t.Fatalf("chunk %d: frames %q", chunk, fr)
		}
		if l.dropped != 3000 {
			t.Errorf("dropped %d", l.dropped)
		}
	}
	// An oversized command, bad flags and too many frames end the stream.
	for name, b := range map[string][]byte{
		"command": append(greeting(), append([]byte{flagCommand | flagLong}, make([]byte, 8)...)...),
		"flags":   append(greeting(), 0x80, 0),
	} {
		l := newFrameLimiter(10, 10)
		if name == "command" {
			binary.BigEndian.PutUint64(b[zmtpGreeting+1:], 1<<40)
		}
		if err := l.feed(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	l := newFrameLimiter(10, 100000)
	many := greeting()
	for range maxFramesPerMessage + 1 {
		many = append(many, frame(true, nil)...)
	}
	if err := l.feed(many); err == nil {
		t.Error("too many frames: no error")
	}
}

func FuzzFrameLimiter(f *testing.F) {
	f.Add(append(greeting(), frame(false, []byte("hello"))...))
	f.Add(append(greeting(), frame(true, bytes.Repeat([]byte("z"), 400))...))
	f.Add([]byte{0xff, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		l := newFrameLimiter(256, 512)
		out := 0
		buf := make([]byte, 100)
		for i := 0; i < len(b); i += 17 {
			if err := l.feed(b[i:min(i+17, len(b))]); err != nil {
				return
			}
			for n := l.take(buf); n > 0; n = l.take(buf) {
				out += n
			}
		}
		// Nothing grows: the output never exceeds the input plus one
		// short header per dropped frame.
		if out > len(b)+2*len(b) {
			t.Fatalf("%d bytes out of %d in", out, len(b))
		}
		if l.body > 256 {
			t.Fatalf("passing a %d-byte body", l.body)
		}
	})
}

func FuzzDecode(f *testing.F) {
	s := NewSigner([]byte("key"))
	good, _ := s.Encode(Message{Header: NewHeader("s", "stream"), Parent: NewHeader("s", "execute_request"), Content: []byte(`{"name":"stdout","text":"hi"}`)})
	f.Add(bytes.Join(good, []byte{0}))
	f.Add([]byte("<IDS|MSG>\x00sig\x00{}\x00{}\x00{}\x00{}"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		frames := bytes.Split(b, []byte{0})
		for _, signer := range []*Signer{s, NewSigner(nil)} {
			m, err := signer.Decode(frames)
			if err != nil {
				continue
			}
			// What Decode accepts round-trips.
			again, err := signer.Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := signer.Decode(again); err != nil {
				t.Fatalf("re-decode: %v", err)
			}
		}
	})
}

func TestDecodeRefusesForgeries(t *testing.T) {
	s := NewSigner([]byte("secret"))
	frames, err := s.Encode(Message{Header: NewHeader("sess", "execute_result"), Content: []byte(`{"data":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decode(frames); err != nil {
		t.Fatalf("good message: %v", err)
	}
	// A process in the sandbox without the key cannot inject output.
	forged, _ := NewSigner([]byte("guess")).Encode(Message{Header: NewHeader("sess", "execute_result"), Content: []byte(`{"data":{}}`)})
	if _, err := s.Decode(forged); err != ErrBadSig {
		t.Errorf("forged: %v", err)
	}
	tampered := append([][]byte(nil), frames...)
	tampered[len(tampered)-1] = []byte(`{"data":{"x":1}}`)
	if _, err := s.Decode(tampered); err != ErrBadSig {
		t.Errorf("tampered: %v", err)
	}
	if _, err := s.Decode([][]byte{[]byte("a")}); err != ErrNoDelimiter {
		t.Errorf("no delimiter: %v", err)
	}
}
