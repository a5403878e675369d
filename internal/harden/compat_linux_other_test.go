//go:build linux && !amd64

package harden

func archScenarios() map[string]scenario { return nil }
