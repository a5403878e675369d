package sandbox

import (
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/wire"
)

// The manager's public API speaks package wire (the REST API's shapes);
// the guest speaks its own protocol (package guestapi). These translate,
// field by field, so that either side can change without the other:
// requests to the guest, answers from it.

func guestRead(r wire.ReadRequest) guestapi.ReadRequest {
	return guestapi.ReadRequest{Path: r.Path, User: r.User, Offset: r.Offset, Length: r.Length, Suffix: r.Suffix}
}

func guestWrite(r wire.WriteRequest) guestapi.WriteRequest {
	return guestapi.WriteRequest{Path: r.Path, User: r.User, Mode: r.Mode, Parents: r.Parents, MaxBytes: r.MaxBytes, Owner: r.Owner}
}

func guestStat(r wire.StatRequest) guestapi.StatRequest {
	return guestapi.StatRequest{Path: r.Path, User: r.User, Follow: r.Follow}
}

func guestList(r wire.ListRequest) guestapi.ListRequest {
	return guestapi.ListRequest{Path: r.Path, User: r.User, Depth: r.Depth, Limit: r.Limit}
}

func guestMkdir(r wire.MkdirRequest) guestapi.MkdirRequest {
	return guestapi.MkdirRequest{Path: r.Path, User: r.User, Parents: r.Parents, Mode: r.Mode, Owner: r.Owner}
}

func guestMove(r wire.MoveRequest) guestapi.MoveRequest {
	return guestapi.MoveRequest{From: r.From, To: r.To, User: r.User, Overwrite: r.Overwrite, Parents: r.Parents}
}

func guestRemove(r wire.RemoveRequest) guestapi.RemoveRequest {
	return guestapi.RemoveRequest{Path: r.Path, User: r.User, Recursive: r.Recursive}
}

func guestArchive(r wire.ArchiveRequest) guestapi.ArchiveRequest {
	return guestapi.ArchiveRequest{Path: r.Path, User: r.User, Gzip: r.Gzip}
}

func guestExtract(r wire.ExtractRequest) guestapi.ExtractRequest {
	return guestapi.ExtractRequest{Path: r.Path, User: r.User, MaxBytes: r.MaxBytes, MaxEntries: r.MaxEntries, MaxRatio: r.MaxRatio}
}

func guestWatch(r wire.WatchRequest) guestapi.WatchRequest {
	return guestapi.WatchRequest{Path: r.Path, User: r.User, Recursive: r.Recursive}
}

func guestFind(r wire.FindRequest) guestapi.FindRequest {
	return guestapi.FindRequest{Path: r.Path, User: r.User, Pattern: r.Pattern, Type: r.Type, Limit: r.Limit}
}

func guestSearch(r wire.SearchRequest) guestapi.SearchRequest {
	return guestapi.SearchRequest{Path: r.Path, User: r.User, Query: r.Query, Regexp: r.Regexp, IgnoreCase: r.IgnoreCase,
		Include: r.Include, Limit: r.Limit, MaxFileSize: r.MaxFileSize}
}

func guestEdit(r wire.EditRequest) guestapi.EditRequest {
	return guestapi.EditRequest{Path: r.Path, User: r.User, OldString: r.OldString, NewString: r.NewString,
		ReplaceAll: r.ReplaceAll, StartLine: r.StartLine, EndLine: r.EndLine, Content: r.Content}
}

func wireFile(f guestapi.FileInfo) wire.FileInfo {
	return wire.FileInfo{Name: f.Name, Path: f.Path, Type: f.Type, Size: f.Size, Mode: f.Mode, MTime: f.MTime,
		Target: f.Target, UID: f.UID, GID: f.GID}
}

func wireFiles(in []guestapi.FileInfo) []wire.FileInfo {
	if in == nil {
		return nil
	}
	out := make([]wire.FileInfo, len(in))
	for i, f := range in {
		out[i] = wireFile(f)
	}
	return out
}

func wireListResult(r guestapi.ListResult) wire.ListResult {
	return wire.ListResult{Path: r.Path, Entries: wireFiles(r.Entries), Truncated: r.Truncated}
}

func wireExtract(r guestapi.ExtractResult) wire.ExtractResult {
	return wire.ExtractResult{Path: r.Path, Files: r.Files, Dirs: r.Dirs, Symlinks: r.Symlinks, Links: r.Links,
		Bytes: r.Bytes, Stripped: r.Stripped}
}

func wireFileEvent(e guestapi.FileEvent) wire.FileEvent {
	return wire.FileEvent{Type: e.Type, Path: e.Path, OldPath: e.OldPath, Entry: e.Entry, Error: e.Error}
}

func wireFind(r guestapi.FindResult) wire.FindResult {
	return wire.FindResult{Matches: wireFiles(r.Matches), Truncated: r.Truncated}
}

func wireSearch(r guestapi.SearchResult) wire.SearchResult {
	out := wire.SearchResult{Truncated: r.Truncated, FilesScanned: r.FilesScanned, FilesSkipped: r.FilesSkipped}
	if r.Matches != nil {
		out.Matches = make([]wire.SearchMatch, len(r.Matches))
		for i, m := range r.Matches {
			out.Matches[i] = wire.SearchMatch{Path: m.Path, Line: m.Line, Text: m.Text, Truncated: m.Truncated}
		}
	}
	return out
}

func wireEdit(r guestapi.EditResult) wire.EditResult {
	return wire.EditResult{Replacements: r.Replacements, File: wireFile(r.File)}
}

func wireExec(r guestapi.ExecResult) wire.ExecResult {
	return wire.ExecResult{ExitCode: r.ExitCode, Signal: r.Signal, OOMKilled: r.OOMKilled, TimedOut: r.TimedOut,
		DurationMs: r.DurationMs, StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes,
		StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated, Pid: r.Pid}
}

func guestPTY(p *wire.PTYSize) *guestapi.PTYSize {
	if p == nil {
		return nil
	}
	return &guestapi.PTYSize{Rows: p.Rows, Cols: p.Cols}
}

func wireProcess(p guestapi.ProcessInfo) wire.ProcessInfo {
	out := wire.ProcessInfo{ID: p.ID, Pid: p.Pid, Tag: p.Tag, Argv: p.Argv, Env: p.Env, Cwd: p.Cwd, User: p.User,
		Stdin: p.Stdin, State: p.State, ExitCode: p.ExitCode, Signal: p.Signal, OOMKilled: p.OOMKilled,
		StartedAt: p.StartedAt, EndedAt: p.EndedAt}
	if p.PTY != nil {
		out.PTY = &wire.PTYSize{Rows: p.PTY.Rows, Cols: p.PTY.Cols}
	}
	if p.Streams != nil {
		out.Streams = make(map[string]wire.StreamInfo, len(p.Streams))
		for k, s := range p.Streams {
			out.Streams[k] = wire.StreamInfo{Written: s.Written, Dropped: s.Dropped, Buffer: s.Buffer}
		}
	}
	return out
}

func wireProcesses(in []guestapi.ProcessInfo) []wire.ProcessInfo {
	if in == nil {
		return nil
	}
	out := make([]wire.ProcessInfo, len(in))
	for i, p := range in {
		out[i] = wireProcess(p)
	}
	return out
}

// wireOutput passes the guest's output events on as wire's.
func wireOutput(fn func(wire.OutputEvent) error) func(guestapi.OutputEvent) error {
	return func(ev guestapi.OutputEvent) error {
		return fn(wire.OutputEvent{Stream: ev.Stream, Offset: ev.Offset, Data: ev.Data, Dropped: ev.Dropped})
	}
}
