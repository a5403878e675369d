// Package agent is the guest agent's core: it reads its Config on the
// setup channel, builds the sandbox's root (overlays, /proc, /dev,
// pivot_root), hardens itself in the order that every workload then
// inherits (cgroup namespace, no_new_privs, Landlock, the spawner thread,
// capabilities, seccomp), answers Ready and serves the protocol, with the
// health and network routes of its own and the services of files, process
// and browser.
package agent
