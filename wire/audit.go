package wire

import (
	"encoding/json"
	"time"
)

// The audit log (docs/audit.md).

// AuditPage is one answer of GET /v1/audit. Records are the lines exactly
// as stored (each still carries its hash; AuditRecord reads one). Next is
// the cursor to continue from; More says whether another match follows.
type AuditPage struct {
	Records []json.RawMessage `json:"records"`
	Next    uint64            `json:"next_cursor"`
	More    bool              `json:"has_more"`
}

// AuditRecord is one record of the audit log.
type AuditRecord struct {
	Seq        uint64          `json:"seq"`
	Time       string          `json:"time"`
	Action     string          `json:"action"`
	Phase      string          `json:"phase"`
	Actor      string          `json:"actor,omitempty"`
	Tenant     string          `json:"tenant,omitempty"`
	Sandbox    string          `json:"sandbox,omitempty"`
	Request    string          `json:"request,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Status     int             `json:"status,omitempty"`
	Code       string          `json:"code,omitempty"`
	Error      string          `json:"error,omitempty"`
	DurationNs int64           `json:"duration_ns,omitempty"`
	Prev       string          `json:"prev"`
	Hash       string          `json:"hash,omitempty"`
}

// AuditQuery filters the audit log (the query of GET /v1/audit and
// /v1/audit/export).
type AuditQuery struct {
	Sandbox, Actor, Tenant string
	// Action matches exactly, or as a prefix when it ends in "." or "*".
	Action string
	Since  time.Time // records at or after
	Until  time.Time // records before
	Cursor uint64    // only records after this next_cursor
	Limit  int       // page size (default 100, at most 1000)
	Tail   int       // the last Tail matching records instead of the first Limit
	// Wait long-polls a query with a cursor: up to this long for records
	// after it (at most 60 s).
	Wait time.Duration
}
