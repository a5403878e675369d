//go:build !linux

package agent

// PodInit reports that the guest cannot run here.
func PodInit([]string) int { return Main() }

// PodMain reports that the guest cannot run here.
func PodMain([]string) int { return Main() }
