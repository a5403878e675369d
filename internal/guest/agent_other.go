//go:build !linux

package guest

import (
	"fmt"
	"os"
)

// Agent is Linux-only.
type Agent struct{}

// Main reports that the guest cannot run here.
func Main() int {
	fmt.Fprintln(os.Stderr, "paddock-guest: sandboxes need Linux")
	return 1
}
