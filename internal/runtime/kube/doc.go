// Package kube is the Kubernetes runtime: each sandbox is a Pod in one
// namespace of a cluster the operator already runs.
//
// A sandbox's Pod runs the template's image unchanged. An init container
// from the guest image (the guest binary alone, see PushGuestImage) copies
// the guest agent into an emptyDir and the sandbox's credentials, from a
// Secret only the init container mounts, into a memory-backed emptyDir;
// the agent then runs as PID 1 of the sandbox container and serves the
// same host↔guest protocol as native sandboxes, over TCP on the Pod
// network with mutual TLS (guestapi's pod.go). No kubectl exec, no
// service-account token, capabilities cut to what the agent needs.
//
// The Pods are the state: Reattach finds a sandbox's Pod by name and UID
// after a restart of Paddock; a Pod deleted, evicted or failed behind
// Paddock's back closes the instance's Done channel with the cluster's
// reason (ExitReason). A default-deny NetworkPolicy covers every sandbox
// Pod; egress goes only to the peers named in Options (Paddock's egress
// proxy and resolver), which identify a sandbox by its Pod IP
// (SandboxForIP).
package kube
