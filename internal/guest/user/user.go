// Package user names the identities a sandbox workload (and the file
// service acting for it) may take: root (uid 0, no capabilities) and user
// (uid 1000).
package user

import (
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// ID is one identity.
type ID struct {
	UID, GID uint32
	Home     string
	Name     string
}

var ids = map[string]ID{
	guestapi.UserRoot: {0, 0, "/root", "root"},
	guestapi.UserUser: {1000, 1000, "/home/user", "user"},
}

// defaultName is the identity of a request that names none.
var defaultName = guestapi.UserRoot

// SetImageUser makes UserUser the image's own (non-root) USER and the
// default identity; the agent calls it once at setup, before serving.
func SetImageUser(u guestapi.ImageUser) {
	ids[guestapi.UserUser] = ID{UID: u.UID, GID: u.GID, Home: u.Home, Name: u.Name}
	defaultName = guestapi.UserUser
}

// Lookup returns the identity named name ("" is the default: root, or an
// image template's user).
func Lookup(name string) (ID, error) {
	if name == "" {
		name = defaultName
	}
	id, ok := ids[name]
	if !ok {
		return ID{}, errs.Invalid("unknown user %q (use %q or %q)", clip(name), guestapi.UserRoot, guestapi.UserUser)
	}
	return id, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
