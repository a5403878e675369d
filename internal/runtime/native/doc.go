// Package native runs sandboxes as Linux namespaces on this host.
//
// A sandbox is the guest agent (this very binary, executed from a sealed
// memfd copy) started as PID 1 of new user, pid, mount, network, ipc, uts
// (and, once it is inside its cgroup, cgroup) namespaces. The host side:
//
//  1. allocates a uid slot (sandbox uid 0..65535 → an unprivileged host
//     range of its own) and a quota'd writable layer owned by that range;
//  2. creates the sandbox's cgroups, delegated to that range;
//  3. starts the guest blocked on its setup channel, moves it into the
//     cgroups (before it can fork), and attaches id-mapped read-only clones
//     of the template's trees inside the guest's mount namespace;
//  4. sends the Config and waits for Ready.
//
// Nothing it mounts lives in the host's mount namespace, so a crash leaves
// no mounts behind; cgroups, layers and run directories are named by
// sandbox id and swept on start.
package native
