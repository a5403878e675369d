// Package gvisor runs sandboxes inside gVisor: the workload's system calls
// are served by gVisor's user-space kernel (the sentry, runsc's systrap
// platform), never by the host's, so a host kernel bug is not reachable
// from the workload. It implements runtime.Backend like package native and
// speaks the same guest protocol; docs/gvisor.md is the user's view.
//
// Per sandbox, the host side:
//
//  1. makes the sandbox's cgroup (runsc joins its sentry and gofer to it)
//     and its quota'd writable layer (the same layout as native's);
//  2. for a networked sandbox, makes a network namespace on a locked
//     thread and has the network attach the sandbox's veth there: runsc
//     (--network=sandbox) hands the interface to gVisor's netstack, and
//     egress leaves through the veth into Paddock's nftables rules, proxy
//     and resolver as on native;
//  3. on another locked thread, unshares a private mount namespace,
//     mounts the template's trees with the writable layer as overlayfs
//     there, and starts `runsc run --detach` from that thread: runsc and
//     its gofer inherit the namespace, so the overlay lives exactly as
//     long as they do and nothing is mounted in the host's namespace;
//  4. listens on a socket in the sandbox's control directory and waits
//     for the agent to dial in with its token (guestapi.GVisorBoot), then
//     serves guestapi.Client through a local proxy socket.
//
// Checkpoint and Restore (checkpoint_linux.go) save and restore a
// sandbox's memory with runsc checkpoint/restore; images carry a copy of
// the writable layer and a manifest that is verified before any restore.
package gvisor
