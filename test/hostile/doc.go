// Package hostile is Paddock's hostile suite: attacks on a sandbox and on
// the control plane, each one a Go test that proves four things.
//
//  1. Positive control: the same action, run unsandboxed (natively in the
//     test process or a child of it, as root, or from a network namespace
//     the test made), succeeds — or reaches the kernel with a different
//     errno — so the refusal below is the sandbox's doing.
//  2. Inside a sandbox, through the real REST API, the action fails safely
//     with the expected error.
//  3. The server still answers: a fresh exec works.
//  4. The audit log holds the event: the action's intent and result
//     records, or the refusal.
//
// docs/security.md lists every case and its expected outcome. The suite
// needs root (it creates real sandboxes); CI runs it as root. The probe
// subdirectory is the small static program that performs the kernel-level
// actions, natively and inside sandboxes.
package hostile
