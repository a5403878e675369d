package runtime

import "github.com/paddockhq/paddock/internal/errs"

// CheckDial is what every backend's DialPort checks first: a TCP port
// number, and an instance still running (done closed when it ended).
func CheckDial(port int, done <-chan struct{}) error {
	if port < 1 || port > 65535 {
		return errs.Invalid("port must be between 1 and 65535")
	}
	select {
	case <-done:
		return errs.New(errs.CodeSandboxNotActive, "the sandbox is not running")
	default:
		return nil
	}
}
