package gate

import (
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
)

// The one parser of credentials in headers, for every surface (REST, MCP,
// E2B, the WebSockets, the port proxy, the console).
//
// Credential confusion (issue 14: a port request with
// "Authorization: bearer KEY" and a port URL token had the key forwarded
// into the sandbox, because a case-sensitive "Bearer " prefix took the
// header for the app's own): header names are case-insensitive (net/http
// canonicalises them) and so are authentication schemes (RFC 9110
// §11.1). Every place that reads a scheme goes through AuthParam, so no
// two places can disagree about what a credential is.

// ErrManyAuthorization answers a request with more than one
// Authorization header: the field is not a list (RFC 9110 §11.6.2), and
// two readers that pick different ones are how a credential slips past
// one check and into another.
var ErrManyAuthorization = errs.New(errs.CodeUnauthenticated, "more than one Authorization header: send exactly one")

// AuthParam returns the credentials of an Authorization (or
// WWW-Authenticate style) value v that uses scheme, compared without
// regard to letter case; the credentials are trimmed of the blanks (SP,
// HTAB) around them. ok is false for another scheme or empty credentials.
func AuthParam(v, scheme string) (cred string, ok bool) {
	v = strings.TrimLeft(v, " \t")
	i := strings.IndexAny(v, " \t")
	if i < 0 || !strings.EqualFold(v[:i], scheme) {
		return "", false
	}
	cred = strings.Trim(v[i:], " \t")
	return cred, cred != ""
}

// Authorization returns the request's Authorization value ("" when there
// is none); more than one is refused (ErrManyAuthorization).
func Authorization(h http.Header) (string, error) {
	vs := h.Values("Authorization")
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", ErrManyAuthorization
}

// Bearer returns the request's bearer credential, "" when it has none
// (no Authorization header, or one of another scheme).
func Bearer(h http.Header) (string, error) {
	v, err := Authorization(h)
	if err != nil {
		return "", err
	}
	tok, _ := AuthParam(v, "Bearer")
	return tok, nil
}

// ErrNoBearer answers a call that needs a key and has no bearer
// credential.
var ErrNoBearer = errs.New(errs.CodeUnauthenticated, "missing bearer token (Authorization: Bearer KEY)")

// RequiredBearer reads "Authorization: Bearer KEY" (the scheme in any
// letter case: AuthParam) for a surface whose every call needs a key:
// none is ErrNoBearer. It is a Surface's Credential (REST and MCP).
func RequiredBearer(r *http.Request) (string, error) {
	token, err := Bearer(r.Header)
	if err != nil {
		return "", err
	}
	if token == "" {
		return "", ErrNoBearer
	}
	return token, nil
}

// Subprotocol returns the value of the first WebSocket subprotocol
// offered as prefix+value (prefix compared without regard to letter
// case), "" if none: the way clients that cannot set a header offer a
// credential ("bearer.KEY").
func Subprotocol(h http.Header, prefix string) string {
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if len(p) > len(prefix) && strings.EqualFold(p[:len(prefix)], prefix) {
				return p[len(prefix):]
			}
		}
	}
	return ""
}

// HasPrefixFold reports whether s starts with prefix, ignoring letter
// case (for stripping a credential subprotocol).
func HasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
