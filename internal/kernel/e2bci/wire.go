// Package e2bci speaks E2B's code-interpreter protocol — what the
// unmodified @e2b/code-interpreter SDKs send to a sandbox's port 49999 —
// over Paddock's code contexts: the request and response shapes, an
// encoder from Paddock's execution events (package codewire) to E2B's
// NDJSON lines, and an http.Handler over a Contexts interface.
//
// The shapes follow what the SDK (2.8.0) parses and what E2B's server
// (e2b-dev/code-interpreter, template/server) sends:
//
//	POST /execute {code, context_id?, language?, env_vars?}
//	  → 200, one JSON object per line:
//	    {"type":"stdout"|"stderr","text":...,"timestamp":...}
//	    {"type":"result","text":...,"html":...,...,"is_main_result":bool}
//	    {"type":"error","name":...,"value":...,"traceback":...}
//	    {"type":"number_of_executions","execution_count":N}
//	    {"type":"end_of_execution"}
//	  400 (text) when both context_id and language are given, 404 (text)
//	  "Context ID not found"
//	POST /contexts {language?, cwd?} → {id, language, cwd}
//	GET /contexts → [{id, language, cwd}, ...]
//	DELETE /contexts/{id} → 200 null; POST /contexts/{id}/restart → 200 null
//	GET /health → "OK"
package e2bci

import (
	"encoding/json"
)

// Port is the sandbox port the SDK sends code-interpreter requests to (in
// the E2b-Sandbox-Port header).
const Port = 49999

// ExecuteRequest is the body of POST /execute.
type ExecuteRequest struct {
	Code      *string           `json:"code"`
	ContextID string            `json:"context_id,omitempty"`
	Language  string            `json:"language,omitempty"`
	EnvVars   map[string]string `json:"env_vars,omitempty"`
}

// CreateContextRequest is the body of POST /contexts.
type CreateContextRequest struct {
	Language string `json:"language,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
}

// Context is a context as E2B describes it.
type Context struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
}

// Line types.
const (
	TypeStdout             = "stdout"
	TypeStderr             = "stderr"
	TypeResult             = "result"
	TypeError              = "error"
	TypeNumberOfExecutions = "number_of_executions"
	TypeEndOfExecution     = "end_of_execution"
)

// Log is a stdout or stderr line.
type Log struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Timestamp string `json:"timestamp"`
}

// Result is a result line: the MIME bundle spread into named fields, as
// E2B's server does (unknown MIME types go to extra).
type Result struct {
	Type         string                     `json:"type"`
	Text         *string                    `json:"text,omitempty"`
	HTML         *string                    `json:"html,omitempty"`
	Markdown     *string                    `json:"markdown,omitempty"`
	SVG          *string                    `json:"svg,omitempty"`
	PNG          *string                    `json:"png,omitempty"`
	JPEG         *string                    `json:"jpeg,omitempty"`
	PDF          *string                    `json:"pdf,omitempty"`
	LaTeX        *string                    `json:"latex,omitempty"`
	JSON         json.RawMessage            `json:"json,omitempty"`
	JavaScript   *string                    `json:"javascript,omitempty"`
	Data         json.RawMessage            `json:"data,omitempty"`
	Chart        json.RawMessage            `json:"chart,omitempty"`
	Extra        map[string]json.RawMessage `json:"extra,omitempty"`
	IsMainResult bool                       `json:"is_main_result"`
}

// Error is an error line.
type Error struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

// NumberOfExecutions is the line carrying the cell's execution count.
type NumberOfExecutions struct {
	Type           string `json:"type"`
	ExecutionCount int    `json:"execution_count"`
}

// EndOfExecution ends every stream.
type EndOfExecution struct {
	Type string `json:"type"`
}
