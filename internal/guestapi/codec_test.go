package guestapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

// FuzzFrameReader: a frame stream from a guest (which the host does not
// trust: the sandbox controls its agent's process once compromised).
// Reading never panics, never returns a payload over its bound, and what
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
			_, p, err := r.NextMax(64)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				break
			}
			if len(p) > 64 {
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

// FuzzReadHead: a request as the guest receives it (the host is trusted,
// but the decoder is what stands between a malformed body and the agent).
// It never panics, refuses what is not a head frame, never reads past the
// head, and decodes what AppendHead wrote.
func FuzzReadHead(f *testing.F) {
	good, _ := AppendHead(nil, ReadRequest{Path: "/w/a", Offset: 3})
	f.Add(append(good, "raw body"...))
	f.Add([]byte{'h', 0, 0, 0, 2, '{', '}'})
	f.Add([]byte{'d', 0, 0, 0, 2, '{', '}'})
	f.Add([]byte{'h', 0xff, 0xff, 0xff, 0xff, '{'})
	f.Add([]byte{'h', 0, 0, 0, 5, '{', '"'})
	f.Add([]byte("h\x00\x00\x00\x0b{\"path\":1}x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var req ReadRequest
		err := ReadHead(r, 1024, &req)
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid && errs.CodeOf(err) != errs.CodeTooLarge {
				t.Fatalf("error without a client code: %v", err)
			}
			return
		}
		if data[0] != FrameHead {
			t.Fatalf("accepted a %q frame as a head", data[0])
		}
		n := int(data[1])<<24 | int(data[2])<<16 | int(data[3])<<8 | int(data[4])
		if rest := r.Len(); rest != len(data)-FrameHeaderLen-n {
			t.Fatalf("read past the head: %d bytes left, want %d", rest, len(data)-FrameHeaderLen-n)
		}
		again, _ := AppendHead(nil, req)
		var back ReadRequest
		if err := ReadHead(bytes.NewReader(again), 1024, &back); err != nil || back != req {
			t.Fatalf("round trip: %+v → %+v (%v)", req, back, err)
		}
	})
}

// FuzzDataStream: a download's frames as the host reads them. The stream
// yields exactly the data frames' bytes, ends at the end frame, and turns
// an error frame into its coded error.
func FuzzDataStream(f *testing.F) {
	var seed []byte
	seed = AppendFrame(seed, FrameData, []byte("abc"))
	seed = AppendFrame(seed, FrameData, []byte("de"))
	seed = AppendFrame(seed, FrameEnd, []byte("{}"))
	f.Add(seed, 3)
	f.Add(AppendFrame(AppendFrame(nil, FrameData, []byte("x")), FrameError, []byte(`{"code":"not_found","message":"gone"}`)), 1)
	f.Add([]byte{'d', 0xff, 0xff, 0xff, 0xff}, 7)
	f.Add([]byte{'o', 0, 0, 0, 1, 'x'}, 1)
	f.Add([]byte{'d', 0, 0, 0, 4, 'a'}, 2)
	f.Fuzz(func(t *testing.T, stream []byte, chunk int) {
		chunk = max(1, chunk%4096)
		// What a correct reader would produce, frame by frame.
		var want []byte
		end := false
		for s := stream; len(s) >= FrameHeaderLen; {
			n := int(s[1])<<24 | int(s[2])<<16 | int(s[3])<<8 | int(s[4])
			if s[0] == FrameData && n <= MaxFrame && n > len(s)-FrameHeaderLen {
				want = append(want, s[FrameHeaderLen:]...) // cut short: what came may be passed on
				break
			}
			if s[0] != FrameData || n > len(s)-FrameHeaderLen {
				end = s[0] == FrameEnd && n <= len(s)-FrameHeaderLen
				break
			}
			want = append(want, s[FrameHeaderLen:FrameHeaderLen+n]...)
			s = s[FrameHeaderLen+n:]
		}
		d := &dataStream{r: bufio.NewReader(bytes.NewReader(stream))}
		var got []byte
		buf := make([]byte, chunk)
		var err error
		for i := 0; i < 1<<16; i++ {
			var n int
			n, err = d.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		if !bytes.HasPrefix(want, got) {
			t.Fatalf("read %q, the data frames hold %q", got, want)
		}
		if err == io.EOF && (!end || !bytes.Equal(got, want)) {
			t.Fatalf("clean end without an end frame after all data (got %d of %d bytes)", len(got), len(want))
		}
		if err == nil {
			t.Fatal("no end after 65536 reads")
		}
	})
}

func TestReadHeadLeavesBody(t *testing.T) {
	b, err := AppendHead(nil, WriteRequest{Path: "/w/f", Mode: "0600"})
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(append(b, "the file's bytes"...))
	var req WriteRequest
	if err := ReadHead(r, MaxHead, &req); err != nil {
		t.Fatal(err)
	}
	if req.Path != "/w/f" || req.Mode != "0600" {
		t.Fatalf("head = %+v", req)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "the file's bytes" {
		t.Fatalf("body = %q", rest)
	}
}

func TestReadHeadRefuses(t *testing.T) {
	big, _ := AppendHead(nil, map[string]string{"k": strings.Repeat("x", 100)})
	for _, c := range []struct {
		name string
		in   []byte
		code errs.Code
	}{
		{"empty body", nil, errs.CodeInvalid},
		{"data frame first", AppendFrame(nil, FrameData, []byte("{}")), errs.CodeInvalid},
		{"cut short", AppendFrame(nil, FrameHead, []byte(`{"k":"v"}`))[:9], errs.CodeInvalid},
		{"not JSON", AppendFrame(nil, FrameHead, []byte("{x")), errs.CodeInvalid},
		{"over the bound", big, errs.CodeTooLarge},
	} {
		var v map[string]string
		err := ReadHead(bytes.NewReader(c.in), 64, &v)
		if errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
}

// A forged length costs the reader what was sent, not what was claimed.
func TestForgedLengthAllocatesLittle(t *testing.T) {
	claim := []byte{FrameHead, 0x3f, 0xff, 0xff, 0xff, '{'}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := NewFrameReader(bytes.NewReader(claim))
	if _, _, err := r.NextMax(1 << 30); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v", err)
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 4<<20 {
		t.Fatalf("a 1-byte frame claiming 1 GiB allocated %d bytes", grown)
	}
	// The positive control: a payload that does arrive is read whole.
	whole := AppendFrame(nil, FrameHead, bytes.Repeat([]byte("y"), 3*growStep+7))
	if _, p, err := NewFrameReader(bytes.NewReader(whole)).NextMax(1 << 30); err != nil || len(p) != 3*growStep+7 {
		t.Fatalf("a large frame read back as %d bytes: %v", len(p), err)
	}
}

func TestErrorFrameRoundTrip(t *testing.T) {
	for _, err := range []error{
		errs.NotFound("/w/x: no such file or directory"),
		errs.Wrap(errs.CodeInternal, errors.New("/var/lib/paddock/secret"), "file operation failed"),
		&RangeError{Size: 0, Err: errs.Invalid("offset 5 is past the end")},
		&RangeError{Size: 12, Err: errs.Invalid("offset 50 is past the end")},
	} {
		b, _ := json.Marshal(ErrorOf(err))
		if strings.Contains(string(b), "/var/lib") {
			t.Fatalf("an error frame carries the cause: %s", b)
		}
		got := AsError(b)
		if errs.CodeOf(got) != errs.CodeOf(err) || errs.Public(got) != errs.Public(err) {
			t.Fatalf("%v → %s → %v", err, b, got)
		}
		wre, wantRange := IsRange(err)
		gre, gotRange := IsRange(got)
		if wantRange != gotRange || (wantRange && wre.Size != gre.Size) {
			t.Fatalf("range error %v came back as %v", err, got)
		}
	}
	if errs.CodeOf(AsError([]byte("nonsense"))) != errs.CodeUnavailable {
		t.Fatal("a malformed error frame is not an unavailable agent")
	}
}

func TestFrameWriterSendOwned(t *testing.T) {
	var out bytes.Buffer
	fw := NewFrameWriter(&out, 64, nil)
	if err := fw.SendJSON(FrameHead, map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, FrameHeaderLen+200)
	copy(buf[FrameHeaderLen:], bytes.Repeat([]byte("z"), 200))
	if err := fw.SendOwned(FrameData, buf); err != nil {
		t.Fatal(err)
	}
	if _, err := (DataWriter{fw}).Write([]byte("tail")); err != nil {
		t.Fatal(err)
	}
	if err := fw.SendJSON(FrameEnd, struct{}{}); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(&out)
	fr := NewFrameReader(br)
	if typ, p, err := fr.Next(); err != nil || typ != FrameHead || string(p) != `{"n":1}` {
		t.Fatalf("head: %q %q %v", typ, p, err)
	}
	d := &dataStream{r: br}
	got, err := io.ReadAll(d)
	if err != nil || string(got) != strings.Repeat("z", 200)+"tail" {
		t.Fatalf("data: %d bytes, %v", len(got), err)
	}
	if err := fw.SendOwned(FrameData, make([]byte, FrameHeaderLen+MaxFrame+1)); err == nil {
		t.Fatal("an oversized owned frame was written")
	}
}
