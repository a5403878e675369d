// Package audit is Paddock's tamper-evident audit log: an append-only,
// hash-chained sequence of JSON records under DATA/audit, written with
// group commit and fsync, with periodic ed25519-signed checkpoints and a
// signed head file so that any edit, deletion, reordering or truncation is
// found by Verify (`paddock audit verify`), offline, with the public key
// alone.
//
// The log is fed by the sandbox manager (Observer: lifecycle, exec, file
// and process events) and by the REST API (Auditor: every authenticated
// request). An intent record is written before an action and a result
// record after; if the intent cannot be written the action is refused
// (fail closed) unless the log was opened fail-open. Arguments are passed
// through Redact, so keys, tokens and passwords never reach the disk.
//
// See docs/audit.md for the format and the verification procedure.
package audit
