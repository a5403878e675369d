// Package browser supervises the sandbox's browser: one Chromium, started
// with the host's arguments on the hardened spawner (like every workload:
// no capabilities, its own cgroup sub-group, so its zygote and renderers
// die with it), restarted after a crash, and reached by the host through
// DevTools connections the agent relays to the sandbox's loopback.
package browser
