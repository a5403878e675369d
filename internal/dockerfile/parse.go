package dockerfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/paddockhq/paddock/internal/errs"
)

// Limits on a Dockerfile.
const (
	MaxDockerfileBytes = 1 << 20
	MaxInstructions    = 512
	MaxStages          = 32
)

// File is a parsed Dockerfile.
type File struct {
	Stages   []instructions.Stage
	MetaArgs []instructions.ArgCommand // ARGs before the first FROM
	Digest   string                    // sha256 of the Dockerfile's bytes (for audit)
	Escape   rune
	Warnings []string
	lines    []string
}

// SyntaxError is the cause of a malformed-Dockerfile error.
type SyntaxError struct {
	Line, Column int // 1-based; Column is that of the instruction (or token) at fault
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("Dockerfile line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Parse parses a Dockerfile with buildkit's parser. Errors are
// errs.CodeInvalid with a *SyntaxError cause giving line and column.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxDockerfileBytes {
		return nil, errs.New(errs.CodeTooLarge, "the Dockerfile is over %d bytes", MaxDockerfileBytes)
	}
	sum := sha256.Sum256(data)
	f := &File{Digest: "sha256:" + hex.EncodeToString(sum[:]), lines: strings.Split(string(data), "\n")}
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, f.syntax(err, 0, "")
	}
	f.Escape = res.EscapeToken
	for _, w := range res.Warnings {
		f.Warnings = append(f.Warnings, w.Short)
	}
	if len(res.AST.Children) > MaxInstructions {
		return nil, errs.New(errs.CodeTooLarge, "the Dockerfile has over %d instructions", MaxInstructions)
	}
	lint := linter.New(&linter.Config{Warn: func(rule, desc, url, msg string, loc []parser.Range) {
		if len(f.Warnings) < 100 {
			line := 0
			if len(loc) > 0 {
				line = loc[0].Start.Line
			}
			f.Warnings = append(f.Warnings, fmt.Sprintf("line %d: %s", line, msg))
		}
	}})
	for _, n := range res.AST.Children {
		cmd, err := instructions.ParseInstructionWithLinter(n, lint)
		if err != nil {
			return nil, f.syntax(err, n.StartLine, n.Value)
		}
		switch c := cmd.(type) {
		case *instructions.Stage:
			if len(f.Stages) >= MaxStages {
				return nil, f.syntax(fmt.Errorf("more than %d stages", MaxStages), n.StartLine, n.Value)
			}
			f.Stages = append(f.Stages, *c)
		case *instructions.ArgCommand:
			if len(f.Stages) == 0 {
				f.MetaArgs = append(f.MetaArgs, *c)
				continue
			}
			f.Stages[len(f.Stages)-1].AddCommand(c)
		case instructions.Command:
			if len(f.Stages) == 0 {
				return nil, f.syntax(errors.New("the first instruction must be FROM (or ARG)"), n.StartLine, n.Value)
			}
			f.Stages[len(f.Stages)-1].AddCommand(c)
		default:
			return nil, f.syntax(fmt.Errorf("unsupported instruction %T", cmd), n.StartLine, n.Value)
		}
	}
	if len(f.Stages) == 0 {
		return nil, errs.Wrap(errs.CodeInvalid, &SyntaxError{Line: 1, Column: 1, Msg: "no FROM instruction"}, "Dockerfile line 1, column 1: no FROM instruction")
	}
	return f, nil
}

// syntax builds the public error for err at line (0: take it from err).
func (f *File) syntax(err error, line int, keyword string) error {
	var le *parser.LocationError
	col := 0
	if errors.As(err, &le) && len(le.Locations) > 0 && len(le.Locations[0]) > 0 {
		r := le.Locations[0][0]
		if line == 0 {
			line = r.Start.Line
		}
		col = r.Start.Character + 1
	}
	if line <= 0 {
		line = 1
	}
	msg := err.Error()
	if le != nil && le.Unwrap() != nil {
		msg = le.Unwrap().Error()
	}
	msg = strings.TrimPrefix(msg, "dockerfile parse error: ")
	if col <= 1 {
		col = f.column(line, keyword)
	}
	se := &SyntaxError{Line: line, Column: col, Msg: firstLine(msg)}
	return errs.Wrap(errs.CodeInvalid, se, "%s", se.Error())
}

// column is where keyword (else the first non-blank) starts on line.
func (f *File) column(line int, keyword string) int {
	if line < 1 || line > len(f.lines) {
		return 1
	}
	l := f.lines[line-1]
	if keyword != "" {
		if i := strings.Index(strings.ToLower(l), strings.ToLower(keyword)); i >= 0 {
			return i + 1
		}
	}
	return len(l) - len(strings.TrimLeft(l, " \t")) + 1
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
