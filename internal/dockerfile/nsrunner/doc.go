// Package nsrunner is a REAL, isolated dockerfile.Runner for tests and
// benchmarks of the builder — not the production runner (phase 2 runs
// RUN in a Paddock sandbox). It does what Paddock's native backend does,
// on a smaller scale: the command runs in new user, mount, PID, network
// (no interfaces but a down loopback), IPC and UTS namespaces, as
// sandbox ids 0-65535 mapped to an unprivileged host range, with
// no_new_privs, on an overlay (userxattr) whose lowers are the layer
// directories id-mapped into its user namespace (open_tree +
// mount_setattr(MOUNT_ATTR_IDMAP), attached from the host inside the
// runner's mount namespace) and whose upper is the builder's directory.
//
// The test binary must call Main first thing in TestMain: the runner
// re-executes it as the namespace helper.
package nsrunner
