// Package e2b serves an E2B-compatible API, so that the unmodified e2b SDKs
// work against Paddock with two environment variables changed
// (E2B_API_URL and E2B_SANDBOX_URL, both pointing at the Paddock server).
//
// It is a thin adapter over the sandbox manager, like every other surface:
// each call is made with the caller's sandbox.Scope, so tenant scoping and
// the audit trail are exactly those of REST, the CLI and MCP.
//
// Two APIs share the mounts the composition root gives this package:
//
//   - the control plane (/sandboxes, /v2/sandboxes...), authenticated by
//     X-API-KEY with a Paddock key (the SDK requires the "e2b_" + hex form,
//     which Paddock issues), answering in E2B's JSON shapes with
//     {code, message} errors;
//   - the in-sandbox daemon E2B calls envd (/health, /files and the
//     Connect-RPC services process.Process and filesystem.Filesystem),
//     recognised by the E2b-Sandbox-Id header and authenticated by the
//     X-Access-Token the control plane issued for that sandbox (a
//     sandbox-scoped token of package auth).
//
// Connect RPC is spoken in its JSON encoding only: unary calls as
// application/json, server streams as application/connect+json envelopes
// (a flag byte, a 4-byte big-endian length, the JSON message; the last
// envelope has flag 0x02 and carries the end-of-stream trailer or error).
//
// File metadata (E2B's X-Metadata-* upload headers, envd 0.6.2) is kept
// on the file, as user.e2b.* extended attributes, through the manager's
// files API (meta.go); command deadlines are the processes' own deadlines,
// which the sandbox enforces (process.go). Neither lives in this package.
package e2b
