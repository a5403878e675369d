// Package code is the guest's code-interpreter service: stateful Python,
// JavaScript, TypeScript and bash contexts (internal/kernel) served on the
// guestapi code routes.
//
// Kernels are sandbox workloads. They are spawned by the process service's
// spawner thread (empty capability bounding set, the agent's seccomp
// filter and Landlock rules inherited), each in a cgroup sub-group of its
// own under the sandbox's workload group — so the sandbox's memory and pids
// limits apply, a kill takes the whole tree, and the PID-1 reaper hands the
// exit status to the context rather than dropping it — as the user the
// request names, with the environment an exec gets.
//
// Each user (root, user) has one kernel.Supervisor, made on the first
// request that needs it, with a private state directory for the kernels'
// connection files and bash cells. Nothing starts before that: a sandbox
// that never runs code pays nothing.
package code
