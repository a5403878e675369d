// Command paddock is Paddock's single binary: the server, the CLI client,
// and — re-executed inside each sandbox — the guest agent.
package main

import (
	"os"

	"github.com/paddockhq/paddock/internal/guest"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	// The native backend starts the guest with argv[0] "paddock-guest";
	// dispatch before any CLI machinery so sandboxes start fast.
	if len(os.Args) > 0 && os.Args[0] == "paddock-guest" {
		os.Exit(guest.Main())
	}
	os.Exit(run(os.Args[1:]))
}
