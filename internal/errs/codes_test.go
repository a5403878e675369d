package errs

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/wire"
)

// The codes are the API's: the ones package wire gives clients.
func TestCodesAreWires(t *testing.T) {
	for code, w := range map[Code]string{
		CodeInvalid: wire.CodeInvalid, CodeNotFound: wire.CodeNotFound, CodeMethodNotAllowed: wire.CodeMethodNotAllowed,
		CodeConflict: wire.CodeConflict, CodeUnauthenticated: wire.CodeUnauthenticated, CodeForbidden: wire.CodeForbidden,
		CodeTooLarge: wire.CodeTooLarge, CodeLimit: wire.CodeLimit, CodeRateLimited: wire.CodeRateLimited,
		CodeUnsupported: wire.CodeUnsupported, CodeUnavailable: wire.CodeUnavailable, CodeTimeout: wire.CodeTimeout,
		CodeCommandNotFound: wire.CodeCommandNotFound, CodeInternal: wire.CodeInternal, CodeSandboxNotActive: wire.CodeSandboxNotActive,
		CodeSandboxPaused: wire.CodeSandboxPaused,
	} {
		if string(code) != w {
			t.Errorf("%s is %q in wire", code, w)
		}
	}
}

// foreign is a coded error that is not an *Error (the client's are).
type foreign struct{ code, msg string }

func (f foreign) Error() string         { return "raw: " + f.msg }
func (f foreign) ErrorCode() string     { return f.code }
func (f foreign) PublicMessage() string { return f.msg }

func TestCoded(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code Code
		msg  string
	}{
		{New(CodeNotFound, "no such %s", "thing"), CodeNotFound, "no such thing"},
		{Wrap(CodeUnavailable, errors.New("/host/path"), "try later"), CodeUnavailable, "try later"},
		{foreign{"forbidden", "not yours"}, CodeForbidden, "not yours"},
		{Wrap(CodeTimeout, foreign{"forbidden", "x"}, "slow"), CodeTimeout, "slow"}, // the first in the chain
		{errors.Join(errors.New("a"), foreign{"not_found", "gone"}), CodeNotFound, "gone"},
		{foreign{"", "no code"}, CodeInternal, "internal error"},
		{errors.New("/etc/shadow: denied"), CodeInternal, "internal error"},
	} {
		if CodeOf(tc.err) != tc.code || Public(tc.err) != tc.msg {
			t.Errorf("%v: %s %q, want %s %q", tc.err, CodeOf(tc.err), Public(tc.err), tc.code, tc.msg)
		}
	}
}
