// Package files is the guest's file service: read, write, stat, list,
// mkdir, move, remove, edit, find, search, archives and watches, each run
// as the request's user inside the sandbox's own root. Paths resolve with
// openat2 and never through magic links; archives extract beneath their
// target only.
package files
