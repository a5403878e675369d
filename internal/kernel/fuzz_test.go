package kernel

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

func collect(o *cellOut, typ string) string {
	var b strings.Builder
	for _, e := range o.take() {
		if e.Type == typ {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// FuzzBashMarkers: whatever a cell prints, split however the pipe splits
// it, the cell's output is everything before its marker (repaired to
// UTF-8), and the exit status is the marker's.
func FuzzBashMarkers(f *testing.F) {
	f.Add("hello\n", uint8(3), 5)
	f.Add("\x1ePDK:notours:1\x1e and \x1ePDK:", uint8(0), 1)
	f.Add("caf\xc3\xa9 \xff", uint8(255), 2)
	f.Fuzz(func(t *testing.T, text string, status uint8, chunk int) {
		if chunk <= 0 || chunk > 64 {
			chunk = 7
		}
		e := &bashEngine{proc: &proc{tail: newTail(1 << 10)}, outDone: make(chan int, 4), errDone: make(chan struct{}, 4)}
		out := newCellOut(DefaultLimits)
		c := &cell{nonce: "0123456789abcdef0123", out: out}
		e.cur = c
		stream := text + "\x1ePDK:" + c.nonce + ":" + itoa(int(status)) + "\x1etrailing"
		var pend []byte
		for i := 0; i < len(stream); i += chunk {
			pend = e.feed(codewire.EventStdout, append(pend, stream[i:min(i+chunk, len(stream))]...))
		}
		out.flushRaw()
		select {
		case st := <-e.outDone:
			if st != int(status) {
				t.Fatalf("status %d, want %d", st, status)
			}
		default:
			t.Fatalf("no marker seen in %q", stream)
		}
		got := collect(out, codewire.EventStdout)
		want := strings.ToValidUTF8(text, "\uFFFD")
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
		// Replacement may differ in how many U+FFFD a bad run becomes
		// when split; the valid text must survive exactly.
		if strings.ReplaceAll(got, "\uFFFD", "") != strings.ReplaceAll(want, "\uFFFD", "") {
			t.Fatalf("output %q, want %q", got, want)
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func FuzzCellOutRaw(f *testing.F) {
	f.Add([]byte("plain"), 3)
	f.Add([]byte("\xe2\x82\xac\xf0\x9f\x98\x80\xff"), 1)
	f.Fuzz(func(t *testing.T, b []byte, chunk int) {
		if chunk <= 0 || chunk > 32 {
			chunk = 5
		}
		o := newCellOut(Limits{MaxOutputBytes: 64}.withDefaults())
		for i := 0; i < len(b); i += chunk {
			o.raw(codewire.EventStdout, b[i:min(i+chunk, len(b))])
		}
		o.flushRaw()
		got := collect(o, codewire.EventStdout)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 out: %q", got)
		}
		if o.outBytes > 64 {
			t.Fatalf("%d bytes past a cap of 64", o.outBytes)
		}
		if len(b) <= 16 && utf8.Valid(b) && got != string(b) {
			t.Fatalf("valid input changed: %q → %q", b, got)
		}
	})
}

func TestNormalizeAndEnv(t *testing.T) {
	for in, want := range map[string]string{"": "python", "PY": "python", " js ": "javascript", "ts": "typescript", "sh": "bash"} {
		if got, ok := codewire.NormalizeLanguage(in); !ok || got != want {
			t.Errorf("%q → %q %v", in, got, ok)
		}
	}
	if _, ok := codewire.NormalizeLanguage("r"); ok {
		t.Error("r accepted")
	}
	for _, bad := range []string{"", "1A", "A-B", "A B", "A$(x)", "A\n"} {
		if checkEnv(map[string]string{bad: "v"}) == nil {
			t.Errorf("env name %q accepted", bad)
		}
	}
	if checkEnv(map[string]string{"OK_1": "v'\"$(x)"}) != nil {
		t.Error("a value with quotes refused")
	}
	pre, post := bashEnvCode(map[string]string{"A": "it's"})
	if !strings.Contains(pre, `export A='it'\''s'`) || !strings.Contains(post, "unset A") {
		t.Errorf("bash env code:\n%s\n%s", pre, post)
	}
}
