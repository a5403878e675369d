// Package layers is Paddock's content-addressed store of unpacked image
// layers and the hardened extractor that fills it.
//
// Every layer lives once, keyed by its diff id (the sha256 of its
// uncompressed tar), as a directory in overlayfs lower-layer form:
//
//	STORE/sha256/<hex>/root/      the layer's files (an overlay lowerdir)
//	STORE/sha256/<hex>/layer.json written last: the layer is complete
//	STORE/refs/<owner>.json       which layers an owner (a template, a
//	                              build-cache entry) holds
//	STORE/tmp/                    staging, flocked while in use, swept at Open
//
// A sandbox root is an overlay of a template's layer directories (top
// first) with the sandbox's writable layer as upperdir: nothing is copied.
// Whiteouts are stored as 0/0 character devices and opaque directories
// carry both user.overlay.opaque and trusted.overlay.opaque, so the same
// tree works for an overlay mounted with userxattr inside a user
// namespace over id-mapped lowers (Paddock's native backend) and for one
// mounted by host root; see docs/templates.md for the measurements.
//
// Layers are untrusted input. Extract never follows a symlink, refuses
// paths that leave the layer, hardlinks to anything but an earlier file of
// the same layer, device nodes, duplicate entries, overlayfs xattrs, and
// layers larger than the caller's limit; each refusal is an errs.Error with
// a stable code whose cause matches one of the Err* reasons here.
package layers
