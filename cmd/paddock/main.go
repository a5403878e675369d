// Command paddock is Paddock's single binary: the server, the CLI client,
// and — re-executed inside each sandbox — the guest agent.
package main

import (
	"os"

	"github.com/paddockhq/paddock/internal/guest"
	"github.com/paddockhq/paddock/internal/harden"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	// Leaked descriptors (CVE-2024-21626 class): whatever the parent left
	// open is marked close-on-exec before anything else, so that no
	// guest, workload or helper this process starts inherits it. (Off
	// Linux there is nothing to start.)
	_ = harden.CloseOnExecAll()
	// The native backend starts the guest with argv[0] "paddock-guest";
	// dispatch before any CLI machinery so sandboxes start fast.
	if len(os.Args) > 0 && os.Args[0] == "paddock-guest" {
		os.Exit(guest.Main())
	}
	os.Exit(run(os.Args[1:]))
}
