// Package hostproc identifies and waits for host processes (a sandbox's
// guest, runsc's sandbox process) across pid reuse: a pid with its start
// time names one process, a pidfd waits for exactly that one.
package hostproc
