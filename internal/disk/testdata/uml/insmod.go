//go:build linux

// Command insmod loads one kernel module file (finit_module(2)); the UML
// runner uses it because Debian's minimal images lack kmod.
package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: insmod MODULE.ko")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), "", 0); err != nil {
		fmt.Fprintln(os.Stderr, "finit_module:", err)
		os.Exit(1)
	}
}
