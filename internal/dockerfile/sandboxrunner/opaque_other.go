//go:build !linux

package sandboxrunner

func opaque(string) bool { return false }
