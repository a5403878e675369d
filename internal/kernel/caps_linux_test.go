//go:build linux

package kernel

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// A cell printing a gigabyte gets the first MaxOutputBytes and a
// truncated flag, and the context goes on.
func TestGigabytePrintCapped(t *testing.T) {
	cases := []struct {
		lang, code, after, want string
		need                    func(testing.TB)
	}{
		{"python", "s = 'x' * (1 << 20)\nfor _ in range(1024):\n    print(s)", "len(s)", `"1048576"`, needPython},
		{"python-fd", "import os\nos.system('head -c 268435456 /dev/zero | tr \"\\\\0\" y')\nz = 1", "z", `"1"`, needPython},
		{"javascript", "const s = 'x'.repeat(1 << 20); for (let i = 0; i < 1024; i++) console.log(s)", "s.length", `"1048576"`, needNode},
		{"bash", "head -c 268435456 /dev/zero | tr '\\0' y; z=1", "echo $z", "1\n", needBash},
	}
	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			c.need(t)
			s := newSup(t, nil)
			lang, _, _ := strings.Cut(c.lang, "-")
			id := newCtx(t, s, lang)
			began := time.Now()
			r := execute(t, s, codewire.ExecuteRequest{Context: id, Code: c.code, TimeoutMS: 120000})
			if r.err != nil || r.end == nil {
				t.Fatalf("%v %+v", r.err, r.end)
			}
			total := len(r.stdout()) + len(r.stderr())
			t.Logf("%s: %v, %d bytes delivered, end %+v", c.lang, time.Since(began), total, r.end)
			if !r.end.Truncated {
				t.Errorf("not flagged truncated")
			}
			if total > DefaultLimits.MaxOutputBytes+256 || total < DefaultLimits.MaxOutputBytes/2 {
				t.Errorf("%d bytes delivered for a cap of %d", total, DefaultLimits.MaxOutputBytes)
			}
			if !strings.Contains(r.stderr(), "output over") {
				t.Errorf("no truncation notice on stderr: %q", trunc(r.stderr(), 200))
			}
			after := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: c.after})
			got := after.mainText()
			if lang == "bash" {
				got = after.stdout()
			}
			if got != c.want {
				t.Errorf("after: %q, want %q", got, c.want)
			}
		})
	}
}

// Output that is not UTF-8 arrives as valid UTF-8 (bad bytes replaced).
func TestNonUTF8Output(t *testing.T) {
	cases := []struct {
		lang, code string
		need       func(testing.TB)
	}{
		{"python", "import sys\nprint('ok \\udcff', 'é')\nsys.stdout.flush()", needPython},
		{"python-fd", "import os\nos.system(\"printf 'ok \\\\377\\\\376 \\\\303\\\\251\\\\n'\")", needPython},
		{"javascript", "process.stdout.write(Buffer.from([0x6f, 0x6b, 0x20, 0xff, 0xfe, 0x20, 0xc3, 0xa9, 0x0a]))", needNode},
		{"bash", "printf 'ok \\377\\376 \\303\\251\\n'", needBash},
	}
	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			c.need(t)
			s := newSup(t, nil)
			lang, _, _ := strings.Cut(c.lang, "-")
			r := mustOK(t, s, codewire.ExecuteRequest{Language: lang, Code: c.code})
			out := r.stdout()
			if !utf8.ValidString(out) || !strings.HasPrefix(out, "ok ") || !strings.Contains(out, "é") || !strings.Contains(out, "\uFFFD") {
				t.Errorf("stdout %q", out)
			}
		})
	}
}

func TestImageOverCapRefused(t *testing.T) {
	needPythonData(t)
	s := newSup(t, func(c *Config) { c.Limits.MaxImageBytes = 20000 })
	r := mustOK(t, s, codewire.ExecuteRequest{Code: `
import matplotlib.pyplot as plt, numpy as np
plt.imshow(np.random.rand(400, 400))
plt.show()`})
	res := r.results()
	if len(res) != 1 {
		t.Fatalf("results %d", len(res))
	}
	if _, ok := res[0].Bundle["image/png"]; ok {
		t.Error("the image over the cap was sent")
	}
	if len(res[0].Omitted) != 1 || res[0].Omitted[0].MIME != "image/png" || res[0].Omitted[0].Bytes <= 20000 ||
		!strings.Contains(res[0].Omitted[0].Reason, "cap") {
		t.Errorf("omitted %+v", res[0].Omitted)
	}
	if _, ok := res[0].Bundle["text/plain"]; !ok {
		t.Error("the text representation went too")
	}
}

// A message over the frame limit (a 40 MiB display) is dropped at the
// transport without taking the connection down.
func TestOversizedMessageDropped(t *testing.T) {
	needPython(t)
	s := newSup(t, nil)
	id := newCtx(t, s, "python")
	r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "from IPython.display import display\ndisplay({'text/plain': 'x' * (40 << 20)}, raw=True)\nprint('after')"})
	if !r.end.Truncated || len(r.results()) != 0 || r.stdout() != "after\n" {
		t.Fatalf("end %+v, %d results, stdout %q", r.end, len(r.results()), trunc(r.stdout(), 100))
	}
	if r := mustOK(t, s, codewire.ExecuteRequest{Context: id, Code: "6*7"}); r.mainText() != `"42"` {
		t.Errorf("next cell: %s", r.mainText())
	}
}
