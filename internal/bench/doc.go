// Package bench is `paddock bench`: reproducible measurements of a Paddock
// server, end to end through its REST API (and MCP), side by side in the
// same run with a plain fork/exec (the floor) and the peers users compare
// it with (bubblewrap, runc, gVisor's runsc).
//
// Every scenario goes through the public client exactly as a user would;
// nothing calls internals that skip work a user pays for. What the bench
// may observe from inside an embedded stack (which sandboxes are alive) is
// used only to wait, untimed, for the warm pool to fill and for teardown
// to finish between scenarios.
//
// Every selected scenario reports numbers or an explicit status with its
// reason: unavailable (the server lacks the capability), missing (a peer
// is not installed) or failed. Percentiles are nearest-rank over the
// successful iterations. docs/benchmarks.md describes the method.
package bench
