//go:build !linux

package template

func isOpaqueDir(p string) bool { return false }
