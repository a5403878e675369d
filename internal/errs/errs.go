// Package errs holds Paddock's sentinel errors and the error type that keeps
// a user-visible message apart from the internal cause.
//
// Every layer wraps with %w; the API layer maps a Code to an HTTP status and
// shows only Public(). The cause (which may carry host paths) goes to the log.
package errs

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code (part of the public API).
type Code string

// Codes: the API's, which package wire lists for clients (a test keeps
// the two lists equal). Keep in step with HTTPStatus and docs/api.md.
const (
	CodeInvalid          Code = "invalid_argument"
	CodeNotFound         Code = "not_found"
	CodeMethodNotAllowed Code = "method_not_allowed"
	CodeConflict         Code = "conflict"
	CodeUnauthenticated  Code = "unauthenticated"
	CodeForbidden        Code = "forbidden"
	CodeTooLarge         Code = "too_large"
	CodeLimit            Code = "limit_exceeded"
	CodeRateLimited      Code = "rate_limited"
	CodeUnsupported      Code = "unsupported"
	CodeUnavailable      Code = "unavailable"
	CodeTimeout          Code = "timeout"
	CodeCommandNotFound  Code = "command_not_found"
	CodeInternal         Code = "internal"
	CodeSandboxNotActive Code = "sandbox_not_running"
	CodeSandboxPaused    Code = "sandbox_paused" // resume it, or create it with auto_resume
)

// Sentinels, for errors.Is.
var (
	ErrInvalid          = &Error{Code: CodeInvalid, Msg: "invalid argument"}
	ErrNotFound         = &Error{Code: CodeNotFound, Msg: "not found"}
	ErrConflict         = &Error{Code: CodeConflict, Msg: "conflict"}
	ErrUnauthenticated  = &Error{Code: CodeUnauthenticated, Msg: "missing or invalid credentials"}
	ErrForbidden        = &Error{Code: CodeForbidden, Msg: "not allowed"}
	ErrTooLarge         = &Error{Code: CodeTooLarge, Msg: "too large"}
	ErrLimit            = &Error{Code: CodeLimit, Msg: "limit exceeded"}
	ErrRateLimited      = &Error{Code: CodeRateLimited, Msg: "rate limited"}
	ErrUnsupported      = &Error{Code: CodeUnsupported, Msg: "not supported on this host"}
	ErrUnavailable      = &Error{Code: CodeUnavailable, Msg: "temporarily unavailable"}
	ErrTimeout          = &Error{Code: CodeTimeout, Msg: "timed out"}
	ErrCommandNotFound  = &Error{Code: CodeCommandNotFound, Msg: "command not found"}
	ErrInternal         = &Error{Code: CodeInternal, Msg: "internal error"}
	ErrSandboxNotActive = &Error{Code: CodeSandboxNotActive, Msg: "sandbox is not running"}
)

// Error is an error with a public message and an optional internal cause.
type Error struct {
	Code  Code
	Msg   string // shown to API callers
	Cause error  // logged, never shown
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Msg + ": " + e.Cause.Error()
	}
	return e.Msg
}

// Unwrap exposes the cause for errors.Is/As chains.
func (e *Error) Unwrap() error { return e.Cause }

// Is makes every *Error with the same code match the sentinel of that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// New returns an error of code with a public message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of code with a public message and an internal cause.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Cause: cause}
}

// Invalid is shorthand for New(CodeInvalid, ...).
func Invalid(format string, args ...any) *Error { return New(CodeInvalid, format, args...) }

// NotFound is shorthand for New(CodeNotFound, ...).
func NotFound(format string, args ...any) *Error { return New(CodeNotFound, format, args...) }

// Coded is an error that carries a code and a message for callers: an
// *Error, or an error from elsewhere that speaks the same codes (the Go
// client's errors: an answer of a Paddock server, or no answer at all).
type Coded interface {
	error
	ErrorCode() string
	PublicMessage() string
}

// ErrorCode is e's code (Coded).
func (e *Error) ErrorCode() string { return string(e.Code) }

// PublicMessage is e's public message (Coded).
func (e *Error) PublicMessage() string { return e.Msg }

// CodeOf returns the code of the first Coded error in err's chain, or
// CodeInternal.
func CodeOf(err error) Code {
	var c Coded
	if errors.As(err, &c) && c.ErrorCode() != "" {
		return Code(c.ErrorCode())
	}
	return CodeInternal
}

// Public returns the message that may be shown to a caller: that of the
// first Coded error in the chain, or a generic text for anything else
// (which may carry host detail).
func Public(err error) string {
	var c Coded
	if errors.As(err, &c) && c.ErrorCode() != "" {
		return c.PublicMessage()
	}
	return "internal error"
}
