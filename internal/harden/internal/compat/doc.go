// Package compat issues system calls through the foreign-ABI entry points
// that a seccomp filter must not let through: the i386 int 0x80 gate on
// amd64. It exists for the hostile tests of package harden and lives in its
// own package so that the assembly never links into production binaries.
package compat
