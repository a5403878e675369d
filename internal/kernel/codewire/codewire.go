// Package codewire holds the JSON shapes of Paddock's code-interpreter API:
// contexts, an execution request and the events of an execution stream
// (one JSON object per NDJSON line).
//
// It depends on the standard library only, so that the REST API, the Go
// client, the MCP tools, the E2B adapter and the guest agent can share it
// without pulling one another in.
//
// An execution stream is, in order: one "start" event, any number of
// "stdout", "stderr", "result" and "error" events in the order the code
// produced them, and one "end" event that says how the cell ended.
package codewire

import (
	"encoding/json"
	"strings"
)

// Languages a context can run.
const (
	Python     = "python"
	JavaScript = "javascript"
	TypeScript = "typescript"
	Bash       = "bash"
)

// Languages lists the languages in the order documentation shows them.
var Languages = []string{Python, JavaScript, TypeScript, Bash}

// NormalizeLanguage maps a requested language and its common aliases to
// one of Languages; "" means Python (the default, as in E2B). ok is false
// for a language Paddock does not run.
func NormalizeLanguage(s string) (lang string, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "python", "python3", "py", "ipython":
		return Python, true
	case "javascript", "js", "node", "nodejs":
		return JavaScript, true
	case "typescript", "ts":
		return TypeScript, true
	case "bash", "sh", "shell":
		return Bash, true
	}
	return s, false
}

// CreateContextRequest creates a context (POST .../code/contexts).
type CreateContextRequest struct {
	Language string            `json:"language,omitempty"` // default python
	Cwd      string            `json:"cwd,omitempty"`      // default: the sandbox user's home
	Env      map[string]string `json:"env,omitempty"`      // added to the sandbox's environment
}

// Context states.
const (
	StateStarting = "starting" // its kernel is being started
	StateIdle     = "idle"     // ready for a cell
	StateBusy     = "busy"     // running a cell
	StateDead     = "dead"     // its kernel ended; the next cell starts a new one (state lost)
)

// Context is one interpreter with its own state (variables, imports, cwd).
type Context struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
	State    string `json:"state"`
	// Default is true for the context a language's cells run in when the
	// request names no context.
	Default bool `json:"default,omitempty"`
	// ExecutionCount is the number of cells the current kernel has run.
	ExecutionCount int `json:"execution_count"`
	// Restarts counts kernel restarts (asked for or after a death).
	Restarts  int    `json:"restarts"`
	CreatedAt string `json:"created_at"` // RFC 3339
	// Queued is the number of cells waiting for the running one.
	Queued int `json:"queued,omitempty"`
}

// ContextList is the answer to GET .../code/contexts.
type ContextList struct {
	Contexts []Context `json:"contexts"`
}

// ExecuteRequest runs one cell (POST .../code). Context and Language are
// exclusive: a context id runs the cell there; a language (or neither)
// runs it in that language's default context, created on first use.
type ExecuteRequest struct {
	Code     string `json:"code"`
	Context  string `json:"context_id,omitempty"`
	Language string `json:"language,omitempty"`
	// Env is set for this cell only and restored afterwards.
	Env map[string]string `json:"env,omitempty"`
	// TimeoutMS bounds the cell's run time (not its wait in the queue);
	// past it the cell is interrupted (KeyboardInterrupt, SIGINT) and the
	// context keeps its state. 0 means the server's default.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// Event types, in the order a stream carries them.
const (
	EventStart  = "start"
	EventStdout = "stdout"
	EventStderr = "stderr"
	EventResult = "result"
	EventError  = "error"
	EventEnd    = "end"
)

// Event is one line of an execution stream. Type says which of the other
// fields is set.
type Event struct {
	Type   string     `json:"type"`
	Text   string     `json:"text,omitempty"` // stdout, stderr
	Start  *Start     `json:"start,omitempty"`
	Result *Result    `json:"result,omitempty"`
	Error  *ExecError `json:"error,omitempty"`
	End    *End       `json:"end,omitempty"`
}

// Start opens a stream: where the cell runs.
type Start struct {
	Context  string `json:"context_id"`
	Language string `json:"language"`
	// Restarted is true when the context's kernel had died (or been
	// killed) and a new one was started for this cell: every variable,
	// import and definition of earlier cells is gone.
	Restarted bool `json:"restarted,omitempty"`
	// StateLost repeats Restarted for clients that look for it by name;
	// Reason says why the old kernel ended.
	StateLost bool   `json:"state_lost,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Result is one rich value: the cell's final value (IsMain) or something
// it displayed. Bundle maps MIME types to their representation: text for
// text/* and image/svg+xml, base64 for image/png, image/jpeg and
// application/pdf, JSON for application/json.
type Result struct {
	IsMain bool                       `json:"is_main_result"`
	Bundle map[string]json.RawMessage `json:"bundle"`
	// Chart is the data of a matplotlib figure, in the shape of E2B's
	// chart result (type, title, axes, elements); see docs/code.md.
	Chart json.RawMessage `json:"chart,omitempty"`
	// Data is a table's columns (column name → values) for a pandas
	// DataFrame.
	Data json.RawMessage `json:"data,omitempty"`
	// Omitted lists representations left out because of a cap, each with
	// the reason.
	Omitted []Omission `json:"omitted,omitempty"`
	// ExecutionCount is set on a main result.
	ExecutionCount int `json:"execution_count,omitempty"`
}

// Text is the result as text for a reader (a terminal, a model): its
// first textual representation (plain text, markdown, html, then JSON),
// and whether it has one.
func (r *Result) Text() (string, bool) {
	for _, mime := range []string{"text/plain", "text/markdown", "text/html", "application/json"} {
		raw, ok := r.Bundle[mime]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return string(raw), true
	}
	return "", false
}

// Omission is a representation a result would have carried.
type Omission struct {
	MIME   string `json:"mime"`
	Bytes  int    `json:"bytes"`
	Reason string `json:"reason"`
}

// ExecError is an error the code raised (or the cell's failure).
type ExecError struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

// End statuses.
const (
	StatusOK        = "ok"        // the cell finished
	StatusError     = "error"     // the code raised an error (or a bash cell exited non-zero)
	StatusTimeout   = "timeout"   // interrupted at its timeout; the context keeps its state
	StatusCancelled = "cancelled" // the caller went away; the cell was interrupted
	StatusDied      = "died"      // the kernel ended during the cell; its state is lost
)

// End closes a stream.
type End struct {
	Status         string  `json:"status"`
	ExecutionCount int     `json:"execution_count,omitempty"`
	DurationMS     float64 `json:"duration_ms"`
	// ExitCode is a bash cell's exit status.
	ExitCode *int `json:"exit_code,omitempty"`
	// Truncated is true when output past the cap was dropped.
	Truncated bool `json:"truncated,omitempty"`
	// Message explains a status other than ok in one sentence.
	Message string `json:"message,omitempty"`
	// StateLost is true when the kernel died during the cell: the next
	// cell runs in a new kernel.
	StateLost bool `json:"state_lost,omitempty"`
}

// Error is the body of a refused request, as every Paddock surface
// answers: {"error":{"code":"not_found","message":"..."}}.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the content of Error.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
