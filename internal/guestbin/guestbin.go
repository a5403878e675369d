// Package guestbin carries the guest agent binary (cmd/paddock-guest)
// inside the paddock binary.
//
// `make build` compiles the guest first into bin/paddock-guest here, so one
// file ships everything. A plain `go build ./cmd/paddock` has no embedded
// guest; the runtime then re-executes the server binary itself as the
// guest, which starts each sandbox a few milliseconds slower (the whole
// server's package initialisation runs every time). paddock serve says at
// start which of the two it runs.
package guestbin

import (
	"embed"
	"io/fs"
)

//go:embed bin
var files embed.FS

const path = "bin/paddock-guest"

// Guest returns the embedded guest binary, or nil if this build has none.
func Guest() []byte {
	b, err := fs.ReadFile(files, path)
	if err != nil || len(b) == 0 {
		return nil
	}
	return b
}

// Embedded reports whether this build carries a guest binary (without
// copying it, as Guest does).
func Embedded() bool {
	fi, err := fs.Stat(files, path)
	return err == nil && fi.Size() > 0
}
