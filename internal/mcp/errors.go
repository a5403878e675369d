package mcp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
)

// toolError is a failure as the model reads it (the text of an isError
// result): what went wrong and what to do next. Code is kept for logs and
// tests.
type toolError struct {
	Code errs.Code
	Msg  string
}

func (e *toolError) Error() string { return e.Msg }

func newToolError(code errs.Code, format string, args ...any) *toolError {
	return &toolError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// errNoSandbox is the answer for an id the caller cannot see (another
// tenant's sandbox is reported exactly like a missing one).
func errNoSandbox(id string) *toolError {
	return newToolError(errs.CodeNotFound, "No sandbox with id %q. Call sandbox_list to see yours, or omit `sandbox` to use this session's sandbox.", clip(id))
}

// hints tell a model what to do next, by error code.
var hints = map[errs.Code]string{
	errs.CodeSandboxNotActive: "Delete it with sandbox_delete and create another with sandbox_create, or omit `sandbox` to use this session's sandbox.",
	errs.CodeForbidden:        "This API key is not allowed to do that; use a key with the needed scope, or ask an administrator.",
	errs.CodeUnauthenticated:  "The MCP server's API key is missing or invalid (PADDOCK_API_KEY in its environment); the user has to fix its configuration.",
	errs.CodeLimit:            "Free resources: delete sandboxes you no longer need (sandbox_list, sandbox_delete), stop background processes (process_signal), or ask for a higher quota.",
	errs.CodeRateLimited:      "Wait a few seconds, then retry.",
	errs.CodeTimeout:          "Retry with a larger timeout_s, or start long-running work with process_start and poll it with process_output.",
	errs.CodeUnavailable:      "Retry in a moment.",
	errs.CodeCommandNotFound:  "Check the program name (is it installed in this sandbox?), or pass `command` to run a line through /bin/sh.",
	errs.CodeTooLarge:         "Split the work into smaller pieces.",
	errs.CodeInternal:         "Retry; if it keeps failing, tell the user.",
}

// explain words err for a model. Public messages only: causes (which may
// hold host detail) stay in the server's log.
func explain(err error) *toolError {
	var te *toolError
	if errors.As(err, &te) {
		return te
	}
	code := errs.CodeOf(err)
	msg := strings.TrimSpace(errs.Public(err))
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	hint := hints[code]
	switch code {
	case errs.CodeInvalid:
		msg = "Invalid input: " + errs.Public(err)
	case errs.CodeInternal:
		msg = "Paddock hit an internal error (details are in the server's log)"
	}
	if msg == "" {
		msg = string(code)
	}
	if hint != "" {
		msg = strings.TrimRight(msg, ".") + ". " + hint
	}
	return &toolError{Code: code, Msg: msg}
}

// clip bounds untrusted text echoed back in a message.
func clip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
