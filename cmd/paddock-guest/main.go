// Command paddock-guest is the guest agent alone: what runs as PID 1 inside
// every sandbox. It is embedded in the paddock binary (see
// internal/guestbin) because a small program starts several milliseconds
// faster than the whole server binary, whose package initialisation every
// sandbox start would otherwise pay.
package main

import (
	"os"

	"github.com/paddockhq/paddock/internal/guest"
)

func main() { os.Exit(guest.Main()) }
