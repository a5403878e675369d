// Package guest is the agent that runs as PID 1 inside every sandbox.
//
// It is started from a sealed memfd copy of its binary (so nothing inside
// can rewrite it: CVE-2019-5736). Main receives its Config on the setup
// channel, builds the sandbox's root filesystem inside its own user and
// mount namespaces, pivots into it, hardens itself (no_new_privs,
// Landlock, capabilities, seccomp — inherited by everything it starts) and
// then serves the guestapi protocol. Because every file and process
// operation runs here, paths resolve in the sandbox's own root by
// construction rather than by checking.
//
// The agent is split by service:
//   - agent: setup, hardening, the server and its routes, health and
//     network changes (Main is agent.Main), and the Pod mode of the kube
//     runtime (PodInit, PodMain);
//   - files: the file service (read, write, list, archives, search, watch);
//   - process: the spawner and reaper, exec, background processes and
//     terminals;
//   - browser: the sandbox's browser supervisor and DevTools tunnels;
//   - rpc: the codec's server side that every route's handler shares;
//   - openat2: path resolution for files and process (the kernel's
//     openat2, or a user-space walk with the same answers inside gVisor);
//   - user: the identities workloads run as.
package guest

import "github.com/paddockhq/paddock/internal/guest/agent"

// Main is the guest's entry point; it returns the process exit code.
func Main() int { return agent.Main() }

// PodInit is `paddock-guest pod-init`, the init container of a Kubernetes
// sandbox (see guestapi's pod.go).
func PodInit(args []string) int { return agent.PodInit(args) }

// PodMain is `paddock-guest pod`, the agent of one Kubernetes sandbox.
func PodMain(args []string) int { return agent.PodMain(args) }
