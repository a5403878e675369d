// Package cgroup creates, limits, measures and destroys the control groups of
// sandboxes, on cgroup v1 (separate memory, pids and cpu hierarchies) and v2
// (the unified hierarchy), detected at run time from /proc/self/mountinfo: v2
// when a cgroup2 mount offers the memory, pids and cpu controllers, else v1
// (a hybrid host whose unified tree has no controllers is v1).
//
// Layout: every sandbox gets one group named "<prefix>/<id>" (prefix is
// "paddock" by default) in each controller it uses — on v1 the memory, pids,
// cpu and cpuacct hierarchies, and the freezer when it is mounted (Destroy
// freezes the group before killing, so a fork bomb cannot race the kill). On
// v2 the first Create enables memory, pids and cpu in cgroup.subtree_control
// from the mount root down to the prefix group; the sandbox group's own
// subtree_control stays empty, so its sub-groups have no controllers and
// processes may live both in it and in them. The host moves the guest agent
// into the group before the guest starts any process, so there is no window
// in which a child escapes its limits.
//
// The group is delegated to the sandbox's root (its host uid): the directory
// and the files needed to create sub-groups and move tasks are chowned to it
// (v1: the pids group's directory, tasks and cgroup.procs; v2: the
// directory, cgroup.procs, cgroup.threads and cgroup.subtree_control), while
// the limit files stay owned by host root. Only the guest agent holds file
// descriptors on these directories (the sandbox never mounts cgroupfs), and
// it uses them through Delegated to put each exec in its own sub-group
// ("e<N>"), so that an exec's whole process tree — double-forked daemons
// included — can be listed and killed. Sub-groups belong to the uid that
// made them, so the guest may set pids.max in them (nested under the
// sandbox's own limit, never above it).
//
// A guest agent using Delegated on v1 should call runtime.LockOSThread in an
// init function: Spawn moves one thread between groups, and should moving it
// back ever fail, the runtime ends that thread — except the main thread,
// which it can only park for good.
package cgroup
