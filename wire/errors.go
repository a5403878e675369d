package wire

// ErrorBody is the shape of every error answer:
// {"error":{"code":"not_found","message":"sandbox not found"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error's code (one of the Code constants) and its
// message for people.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes (docs/api.md).
const (
	CodeInvalid          = "invalid_argument"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeConflict         = "conflict"
	CodeUnauthenticated  = "unauthenticated"
	CodeForbidden        = "forbidden"
	CodeTooLarge         = "too_large"
	CodeLimit            = "limit_exceeded"
	CodeRateLimited      = "rate_limited"
	CodeUnsupported      = "unsupported"
	CodeUnavailable      = "unavailable"
	CodeTimeout          = "timeout"
	CodeCommandNotFound  = "command_not_found"
	CodeInternal         = "internal"
	CodeSandboxNotActive = "sandbox_not_running"
	CodeSandboxPaused    = "sandbox_paused"
)
