// Package guest is the agent that runs as PID 1 inside every sandbox.
//
// It is the same binary as the server, re-executed from a sealed memfd copy
// (so nothing inside can rewrite it: CVE-2019-5736). Main receives its Config
// on the setup channel, builds the sandbox's root filesystem inside its own
// user and mount namespaces, pivots into it, hardens itself (no_new_privs,
// Landlock, capabilities, seccomp — inherited by everything it starts) and
// then serves the guestapi protocol. Because every file and process
// operation runs here, paths resolve in the sandbox's own root by
// construction rather than by checking.
package guest
