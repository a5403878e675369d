// Package volume keeps named, size-bounded volumes that outlive any
// sandbox (docs/state.md, "Volumes").
//
// Each volume is an ext4 image of exactly its quota, preallocated on the
// host's disk and loop-mounted under the data directory; a sandbox gets a
// bind mount of the volume's data directory (the runtime id-maps it). A
// full volume answers ENOSPC inside, and because the image's blocks were
// reserved when it was made, filling it takes nothing more from the host.
//
// Layout under the store's directory (<tenant> is the tenant name
// hex-encoded):
//
//	records/<tenant>/<name>.json   the volume exists once this is written
//	images/<tenant>/<name>.img     the ext4 image, 0600
//	mnt/<tenant>/<name>/           its mount point (0700); data/ is what
//	                               sandboxes and the files API see
//	tmp/                           images being made; emptied at Open
package volume
