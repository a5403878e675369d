//go:build linux

package native

// SetNSPools turns the use of prepared network namespaces on or off, for
// benchmarks that interleave both (the pools keep filling either way).
func (b *Backend) SetNSPools(on bool) { b.nsPoolOff.Store(!on) }
