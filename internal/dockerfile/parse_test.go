package dockerfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line, col int
	}{
		{"unknown", "FROM scratch\n  FORM x\n", 2, 3},
		{"no-from", "RUN echo\n", 1, 1},
		{"empty", "", 1, 1},
		{"bad-flag", "FROM scratch\nCOPY --nope=1 a b\n", 2, 1},
		{"env-no-value", "FROM scratch\nENV\n", 2, 1},
		{"copy-one-arg", "FROM scratch\nRUN true\nCOPY a\n", 3, 1},
		{"bad-expose", "FROM scratch\nEXPOSE\n", 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src))
			var se *SyntaxError
			if errs.CodeOf(err) != errs.CodeInvalid || !errors.As(err, &se) {
				t.Fatalf("err = %v", err)
			}
			if se.Line != c.line || se.Column != c.col {
				t.Fatalf("at %d:%d, want %d:%d (%v)", se.Line, se.Column, c.line, c.col, err)
			}
			if !strings.Contains(errs.Public(err), "line") {
				t.Fatalf("public message %q has no position", errs.Public(err))
			}
		})
	}
}

func TestParseStages(t *testing.T) {
	f, err := Parse([]byte("ARG BASE=scratch\nFROM $BASE AS one\nRUN echo\nFROM one\nCOPY --from=one /a /b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Stages) != 2 || len(f.MetaArgs) != 1 || f.Stages[0].Name != "one" || len(f.Stages[1].Commands) != 1 {
		t.Fatalf("%+v", f)
	}
	if !strings.HasPrefix(f.Digest, "sha256:") {
		t.Fatal(f.Digest)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"FROM scratch\nRUN echo hi\n", "FROM a AS b\nCOPY --from=b x y\n", "# syntax=x\nFROM\\\n s\n", "FROM x\nRUN <<EOF\nhi\nEOF\n", "ARG A\nFROM ${A:-x}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := Parse([]byte(s))
		if err != nil {
			var se *SyntaxError
			if errs.CodeOf(err) == errs.CodeInvalid && (!errors.As(err, &se) || se.Line < 1 || se.Column < 1) {
				t.Fatalf("%q: invalid without a position: %v", s, err)
			}
		}
	})
}
