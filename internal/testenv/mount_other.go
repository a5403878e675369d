//go:build !linux

package testenv

func unmountDetach(string) error { return nil }
