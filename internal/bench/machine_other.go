//go:build !linux

package bench

func kernelRelease() string { return "" }
