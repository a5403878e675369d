// Command paddock-guest is the guest agent alone: what runs as PID 1 inside
// every sandbox. It is embedded in the paddock binary (see
// internal/guestbin) because a small program starts several milliseconds
// faster than the whole server binary, whose package initialisation every
// sandbox start would otherwise pay.
//
// In a Kubernetes Pod (the kube runtime) it is also the init container
// ("pod-init") and the agent ("pod"); see internal/guestapi's pod.go.
package main

import (
	"os"

	"github.com/paddockhq/paddock/internal/guest"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "pod-init":
			os.Exit(guest.PodInit(os.Args[2:]))
		case "pod":
			os.Exit(guest.PodMain(os.Args[2:]))
		}
	}
	os.Exit(guest.Main())
}
