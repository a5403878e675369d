// Package cgroup creates, limits, measures and destroys the control groups of
// sandboxes, on cgroup v1 (separate memory, pids and cpu hierarchies) and v2
// (the unified hierarchy), detected at run time.
//
// Layout: every sandbox gets one group named "<prefix>/<id>" (prefix is
// "paddock" by default) in each controller it uses. The host moves the guest
// agent into it before the guest starts any process, so there is no window in
// which a child escapes its limits.
//
// The group is delegated to the sandbox's root (its host uid): the directory
// and the files needed to create sub-groups and move tasks are chowned to it,
// while the limit files stay owned by host root. Only the guest agent holds
// file descriptors on these directories (the sandbox never mounts cgroupfs),
// and it uses them through Delegated to put each exec in its own sub-group
// ("e<N>"), so that an exec's whole process tree — double-forked daemons
// included — can be listed and killed.
package cgroup
