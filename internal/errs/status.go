package errs

import "net/http"

// HTTPStatus is the HTTP status every surface answers an error of code
// with (the REST API, the guest agent, the compatibility APIs).
func HTTPStatus(code Code) int {
	switch code {
	case CodeInvalid, CodeCommandNotFound:
		return http.StatusBadRequest
	case CodeUnauthenticated:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeConflict, CodeSandboxNotActive, CodeSandboxPaused:
		return http.StatusConflict
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeLimit, CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUnsupported:
		return http.StatusNotImplemented
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
