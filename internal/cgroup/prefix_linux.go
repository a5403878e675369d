//go:build linux

package cgroup

// Prefix is the group under which sandbox groups live in every hierarchy
// ("paddock" unless configured). Backends that hand a group to another
// program (runsc) name it by Prefix()/id relative to the hierarchy root.
func (h *Host) Prefix() string { return h.prefix }
