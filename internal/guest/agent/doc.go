// Package agent is the guest agent's core: it reads its Config on the
// setup channel, builds the sandbox's root (overlays, /proc, /dev,
// pivot_root), hardens itself in the order that every workload then
// inherits (cgroup namespace, no_new_privs, Landlock, the spawner thread,
// capabilities, seccomp), answers Ready and serves the protocol, with the
// health and network routes of its own and the services of files, process
// and browser.
//
// Started by the gVisor runtime (first argument guestapi.GVisorArg) it
// runs its gVisor mode instead (gvisor_linux.go): runsc has built the
// root, so the agent reads a boot file, dials the host with a token
// rather than listening (gVisor cannot checkpoint a listener on a host
// socket), mounts gVisor's pids controller, and leaves out what gVisor's
// kernel does not implement (securebits, Landlock, openat2: resolution
// goes through the user-space walk of package openat2).
package agent
