//go:build !linux

package cgroup

// Prefix is empty off Linux.
func (h *Host) Prefix() string { return "" }
