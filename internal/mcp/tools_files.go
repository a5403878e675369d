package mcp

import (
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/textcut"
	"github.com/paddockhq/paddock/wire"
)

const (
	defaultReadLines = 2000
	defaultReadBytes = 256 << 10
	maxReadBytes     = 4 << 20
	maxWriteBytes    = 8 << 20
	defaultEntries   = 1000
	maxEntries       = 10000
	defaultMatches   = 200
	maxMatches       = 10000
)

type fileReadIn struct {
	sandboxIn
	Path      string `json:"path" jsonschema:"The file's path; relative paths are under /workspace."`
	StartLine int    `json:"start_line,omitempty" jsonschema:"First line to return, counting from 1 (default 1)."`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"Last line to return, inclusive (default: start_line + 1999)."`
	MaxBytes  int    `json:"max_bytes,omitempty" jsonschema:"Most bytes of content to return (default 262144, at most 4194304)."`
}

type fileReadOut struct {
	sandboxOut
	Path       string `json:"path"`
	Content    string `json:"content" jsonschema:"The lines asked for, exactly as in the file (each ending in a newline except perhaps the file's last)."`
	StartLine  int    `json:"start_line" jsonschema:"Line number of the first line in content (from 1)."`
	EndLine    int    `json:"end_line" jsonschema:"Line number of the last line in content (start_line-1 if none)."`
	TotalLines int    `json:"total_lines,omitempty" jsonschema:"Lines in the whole file (absent for very large files)."`
	More       bool   `json:"more" jsonschema:"The file goes on after end_line: read again with start_line = end_line + 1."`
	Truncated  bool   `json:"truncated" jsonschema:"Content was cut: max_bytes reached, or over-long lines shortened (marked)."`
	Size       int64  `json:"size" jsonschema:"File size in bytes."`
}

type fileWriteIn struct {
	sandboxIn
	Path    string `json:"path" jsonschema:"The file's path; relative paths are under /workspace. Missing parent directories are created."`
	Content string `json:"content" jsonschema:"The whole new content of the file (text)."`
	Mode    string `json:"mode,omitempty" jsonschema:"Permissions in octal, e.g. \"0755\" for a script (default: keep an existing file's, 0644 for a new one)."`
}

type fileWriteOut struct {
	sandboxOut
	Path  string `json:"path"`
	Bytes int64  `json:"bytes" jsonschema:"Size of the file written."`
	Mode  string `json:"mode"`
}

type fileEditIn struct {
	sandboxIn
	Path       string `json:"path" jsonschema:"The file's path; relative paths are under /workspace."`
	OldString  string `json:"old_string" jsonschema:"Exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is set: include enough surrounding lines to make it unique."`
	NewString  string `json:"new_string" jsonschema:"The replacement text (empty deletes old_string)."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string."`
}

type fileEditOut struct {
	sandboxOut
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	Bytes        int64  `json:"bytes" jsonschema:"Size of the file after the edit."`
}

type fileListIn struct {
	sandboxIn
	Path  string `json:"path,omitempty" jsonschema:"Directory to list (default /workspace)."`
	Depth int    `json:"depth,omitempty" jsonschema:"Levels to descend: 1 (default) lists the directory's entries, 2 their entries too, and so on (at most 64)."`
	Limit int    `json:"limit,omitempty" jsonschema:"Most entries to return (default 1000, at most 10000)."`
}

type entry struct {
	Path   string    `json:"path"`
	Type   string    `json:"type" jsonschema:"file, dir, symlink or other."`
	Size   int64     `json:"size"`
	Mode   string    `json:"mode" jsonschema:"Permissions in octal."`
	MTime  time.Time `json:"mtime"`
	Target string    `json:"target,omitempty" jsonschema:"Where a symlink points."`
}

func entryOf(fi wire.FileInfo) entry {
	return entry{Path: fi.Path, Type: fi.Type, Size: fi.Size, Mode: fi.Mode, MTime: fi.MTime, Target: fi.Target}
}

type fileListOut struct {
	sandboxOut
	Path      string  `json:"path"`
	Entries   []entry `json:"entries"`
	Truncated bool    `json:"truncated" jsonschema:"More entries exist than were returned."`
}

type fileFindIn struct {
	sandboxIn
	Pattern string `json:"pattern" jsonschema:"Glob relative to path: * and ? match within a name, ** any number of directories, e.g. \"**/*.py\" or \"src/*_test.go\"."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search under (default /workspace)."`
	Type    string `json:"type,omitempty" jsonschema:"Only entries of this type: file, dir or symlink."`
	Limit   int    `json:"limit,omitempty" jsonschema:"Most matches to return (default 200, at most 10000)."`
}

type match struct {
	Path string `json:"path"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

type fileFindOut struct {
	sandboxOut
	Matches   []match `json:"matches"`
	Truncated bool    `json:"truncated" jsonschema:"More matches exist than were returned."`
}

type fileSearchIn struct {
	sandboxIn
	Query      string `json:"query" jsonschema:"Text to find in file contents (a literal string unless regexp is set)."`
	Path       string `json:"path,omitempty" jsonschema:"File or directory to search (default /workspace; directories are searched recursively)."`
	Regexp     bool   `json:"regexp,omitempty" jsonschema:"Query is a regular expression (RE2 syntax)."`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Include    string `json:"include,omitempty" jsonschema:"Only files whose path relative to path matches this glob, e.g. \"**/*.go\"."`
	Limit      int    `json:"limit,omitempty" jsonschema:"Most matching lines to return (default 200, at most 10000)."`
}

type lineMatch struct {
	Path string `json:"path"`
	Line int    `json:"line" jsonschema:"Line number, from 1."`
	Text string `json:"text" jsonschema:"The matching line (long lines are cut)."`
}

type fileSearchOut struct {
	sandboxOut
	Matches      []lineMatch `json:"matches"`
	Truncated    bool        `json:"truncated" jsonschema:"More matches exist than were returned."`
	FilesScanned int64       `json:"files_scanned"`
	FilesSkipped int64       `json:"files_skipped" jsonschema:"Binary, very large or unreadable files skipped."`
}

// bounded clamps a count argument to 1..max, with a default for 0.
func bounded(n, def, max int, name string) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0:
		return 0, newToolError(errs.CodeInvalid, "`%s` must be positive.", name)
	case n > max:
		return max, nil
	}
	return n, nil
}

func fileTools(tb *Toolbox) {
	Add(tb, Tool{Name: "file_read", Need: rights.Of(rights.Read), Title: "Read a file", ReadOnly: true,
		Description: "Read a text file in a sandbox, whole or by line range (start_line, end_line; lines count from 1). " +
			"Large files come in parts: if more is true, read on from end_line + 1. Binary files are refused; " +
			"inspect them with exec (e.g. `file PATH`, `xxd PATH | head`)."},
		func(c *Call, in fileReadIn) (fileReadOut, error) {
			if in.Path == "" {
				return fileReadOut{}, newToolError(errs.CodeInvalid, "Give `path`: the file to read.")
			}
			if in.StartLine < 0 || in.EndLine < 0 {
				return fileReadOut{}, newToolError(errs.CodeInvalid, "start_line and end_line count from 1.")
			}
			start := max(in.StartLine, 1)
			end := in.EndLine
			if end == 0 {
				end = start + defaultReadLines - 1
			}
			if end < start {
				return fileReadOut{}, newToolError(errs.CodeInvalid, "end_line (%d) is before start_line (%d).", end, start)
			}
			limit, err := bounded(in.MaxBytes, defaultReadBytes, maxReadBytes, "max_bytes")
			if err != nil {
				return fileReadOut{}, err
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *fileReadOut) error {
				// The sandbox reads the range: only its lines cross, however
				// large the file.
				r, err := c.Backend().ReadLines(c.Context(), id, wire.LinesRequest{Path: in.Path, Start: start, End: end, MaxBytes: limit})
				if err != nil {
					return err
				}
				if r.Binary {
					return errBinary
				}
				if r.Total > 0 && start > r.Total {
					return newToolError(errs.CodeInvalid, "start_line %d is past the end of %s, which has %d lines.", start, clip(in.Path), r.Total)
				}
				*out = fileReadOut{Path: in.Path, Content: textcut.Valid(r.Content), StartLine: start, EndLine: r.End, TotalLines: r.Total,
					More: r.More, Truncated: r.Truncated, Size: r.Size}
				return nil
			})
		})

	Add(tb, Tool{Name: "file_write", Need: rights.Of(rights.Write), Title: "Write a file", Idempotent: true,
		Description: "Create or overwrite a text file in a sandbox with the given content (parent directories are " +
			"created). To change part of an existing file, file_edit is safer and cheaper."},
		func(c *Call, in fileWriteIn) (fileWriteOut, error) {
			if in.Path == "" {
				return fileWriteOut{}, newToolError(errs.CodeInvalid, "Give `path`: the file to write.")
			}
			if len(in.Content) > maxWriteBytes {
				return fileWriteOut{}, newToolError(errs.CodeTooLarge, "The content is over %d bytes; write it in parts (e.g. several files) or generate it inside the sandbox with exec.", maxWriteBytes)
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *fileWriteOut) error {
				fi, err := c.Backend().WriteFile(c.Context(), id, wire.WriteRequest{Path: in.Path, Mode: in.Mode, Parents: true},
					strings.NewReader(in.Content), int64(len(in.Content)))
				*out = fileWriteOut{Path: fi.Path, Bytes: fi.Size, Mode: fi.Mode}
				return err
			})
		})

	Add(tb, Tool{Name: "file_edit", Need: rights.Of(rights.Write), Title: "Edit a file",
		Description: "Change a file in place by replacing an exact string: old_string must match the file's text " +
			"exactly (whitespace and indentation included) and occur once, unless replace_all is set. Include a few " +
			"surrounding lines in old_string to make it unique. Read the file first (file_read) to copy the text exactly."},
		func(c *Call, in fileEditIn) (fileEditOut, error) {
			if in.Path == "" || in.OldString == "" {
				return fileEditOut{}, newToolError(errs.CodeInvalid, "Give `path` and a non-empty `old_string` (to create a file or replace it whole, use file_write).")
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *fileEditOut) error {
				res, err := c.Backend().EditFile(c.Context(), id, wire.EditRequest{Path: in.Path, OldString: in.OldString,
					NewString: in.NewString, ReplaceAll: in.ReplaceAll})
				*out = fileEditOut{Path: res.File.Path, Replacements: res.Replacements, Bytes: res.File.Size}
				return err
			})
		})

	Add(tb, Tool{Name: "file_list", Need: rights.Of(rights.Read), Title: "List a directory", ReadOnly: true,
		Description: "List a directory in a sandbox (default /workspace): each entry's path, type, size, mode and " +
			"modification time; depth > 1 descends into subdirectories."},
		func(c *Call, in fileListIn) (fileListOut, error) {
			limit, err := bounded(in.Limit, defaultEntries, maxEntries, "limit")
			if err != nil {
				return fileListOut{}, err
			}
			if in.Depth < 0 {
				return fileListOut{}, newToolError(errs.CodeInvalid, "`depth` must be positive.")
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *fileListOut) error {
				*out = fileListOut{Entries: []entry{}}
				res, err := c.Backend().ListFiles(c.Context(), id, wire.ListRequest{Path: in.Path, Depth: min(in.Depth, 64), Limit: limit})
				if err != nil {
					return err
				}
				out.Path, out.Truncated = res.Path, res.Truncated
				for _, fi := range res.Entries {
					out.Entries = append(out.Entries, entryOf(fi))
				}
				return nil
			})
		})

	Add(tb, Tool{Name: "file_find", Need: rights.Of(rights.Read), Title: "Find files by name", ReadOnly: true,
		Description: "Find files and directories whose path matches a glob, e.g. \"**/*.py\" (** spans directories), " +
			"under a directory (default /workspace)."},
		func(c *Call, in fileFindIn) (fileFindOut, error) {
			if in.Pattern == "" {
				return fileFindOut{}, newToolError(errs.CodeInvalid, "Give `pattern`, a glob such as \"**/*.go\".")
			}
			limit, err := bounded(in.Limit, defaultMatches, maxMatches, "limit")
			if err != nil {
				return fileFindOut{}, err
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *fileFindOut) error {
				*out = fileFindOut{Matches: []match{}}
				res, err := c.Backend().FindFiles(c.Context(), id, wire.FindRequest{Path: in.Path, Pattern: in.Pattern, Type: in.Type, Limit: limit})
				if err != nil {
					return err
				}
				out.Truncated = res.Truncated
				for _, fi := range res.Matches {
					out.Matches = append(out.Matches, match{Path: fi.Path, Type: fi.Type, Size: fi.Size})
				}
				return nil
			})
		})

	Add(tb, Tool{Name: "file_search", Need: rights.Of(rights.Read), Title: "Search file contents", ReadOnly: true,
		Description: "Search file contents like grep: every line containing query (a literal, or a regular " +
			"expression with regexp), under a directory (default /workspace), with path and line number. Narrow it " +
			"with include (a glob such as \"**/*.ts\"). Binary and very large files are skipped."},
		func(c *Call, in fileSearchIn) (fileSearchOut, error) {
			if in.Query == "" {
				return fileSearchOut{}, newToolError(errs.CodeInvalid, "Give `query`: the text to search for.")
			}
			limit, err := bounded(in.Limit, defaultMatches, maxMatches, "limit")
			if err != nil {
				return fileSearchOut{}, err
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *fileSearchOut) error {
				*out = fileSearchOut{Matches: []lineMatch{}}
				res, err := c.Backend().SearchFiles(c.Context(), id, wire.SearchRequest{Path: in.Path, Query: in.Query,
					Regexp: in.Regexp, IgnoreCase: in.IgnoreCase, Include: in.Include, Limit: limit})
				if err != nil {
					return err
				}
				out.Truncated, out.FilesScanned, out.FilesSkipped = res.Truncated, res.FilesScanned, res.FilesSkipped
				for _, m := range res.Matches {
					out.Matches = append(out.Matches, lineMatch{Path: m.Path, Line: m.Line, Text: textcut.Valid(m.Text)})
				}
				return nil
			})
		})
}

var errBinary = newToolError(errs.CodeInvalid, "This looks like a binary file (it contains NUL bytes), so file_read does not return it; inspect it with exec, e.g. `file PATH` or `xxd PATH | head -50`.")
