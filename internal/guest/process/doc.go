// Package process is the guest's process service: the spawner and reaper
// every workload goes through (one hardened thread with an empty
// capability bounding set forks them all, each into a cgroup sub-group of
// its own), exec (a command whose output streams back and which ends with
// its request), background processes kept in a bounded registry with ring
// buffers of their output, and terminals.
package process
