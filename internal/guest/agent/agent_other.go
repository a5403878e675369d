//go:build !linux

package agent

import (
	"fmt"
	"os"
)

// Main reports that the guest cannot run here.
func Main() int {
	fmt.Fprintln(os.Stderr, "paddock-guest: sandboxes need Linux")
	return 1
}
