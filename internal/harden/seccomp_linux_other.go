//go:build linux && !amd64 && !arm64

package harden

// nativeArch: only amd64 and arm64 have a syscall table here; Program and
// LoadSeccomp report errs.ErrUnsupported elsewhere.
func nativeArch() (archInfo, bool) { return archInfo{}, false }
