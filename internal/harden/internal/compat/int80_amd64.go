package compat

// Int80 makes the i386 system call nr through int $0x80 and returns the raw
// result (a negative errno on failure). Only pointer-free calls such as
// getpid are meaningful: i386 arguments are 32 bits wide.
func Int80(nr, a1, a2, a3 uintptr) uintptr
