package wire

import "github.com/paddockhq/paddock/internal/kernel/codewire"

// Code contexts (docs/code.md): the shapes are codewire's — shared with
// the guest, the MCP tools and the E2B adapter — with the sandbox user a
// context runs as added.

// CodeEvent is one line of an execution stream (POST .../code with
// Accept: application/x-ndjson).
type CodeEvent = codewire.Event

// CodeExecution is a whole execution gathered into one answer (POST
// .../code?stream=false or Accept: application/json).
type CodeExecution = codewire.Execution

// CodeExecuteRequest runs one cell (POST /v1/sandboxes/{id}/code).
type CodeExecuteRequest struct {
	codewire.ExecuteRequest
	// User runs the cell as root (the default, as for exec) or user; with
	// a context_id it may be left out and must otherwise be the context's.
	User string `json:"user,omitempty"`
}

// CodeContextRequest creates a context (POST .../code/contexts).
type CodeContextRequest struct {
	codewire.CreateContextRequest
	User string `json:"user,omitempty"` // root (default) or user
}

// CodeContext is one context and the user it runs as.
type CodeContext struct {
	codewire.Context
	User string `json:"user"`
}

// CodeContextList is the answer of GET .../code/contexts, oldest first.
type CodeContextList struct {
	Contexts []CodeContext `json:"contexts"`
}

// The parts of the shapes above, named here so that a program using the
// Go client can name them (codewire is internal to the module).
type (
	CodeExecuteFields = codewire.ExecuteRequest
	CodeContextFields = codewire.CreateContextRequest
	CodeContextInfo   = codewire.Context
	CodeStart         = codewire.Start
	CodeResult        = codewire.Result
	CodeOmission      = codewire.Omission
	CodeError         = codewire.ExecError
	CodeEnd           = codewire.End
)
