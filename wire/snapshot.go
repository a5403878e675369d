package wire

import "time"

// Snapshot is one filesystem snapshot (docs/state.md).
type Snapshot struct {
	Name      string    `json:"name"`
	Template  string    `json:"template"`
	Source    string    `json:"source"` // the sandbox it was taken of
	CreatedAt time.Time `json:"created_at"`
	Bytes     int64     `json:"bytes"` // its files' contents
	Files     int       `json:"files"` // entries: files, directories, links
}

// CreateSnapshotRequest is POST /v1/sandboxes/{id}/snapshots.
type CreateSnapshotRequest struct {
	Name string `json:"name"`
}

// SnapshotList is GET /v1/snapshots.
type SnapshotList struct {
	Snapshots []Snapshot `json:"snapshots"`
}

// ForkRequest is POST /v1/sandboxes/{id}/fork.
type ForkRequest struct {
	Count int `json:"count"` // 1 … MaxForks; 0 means 1
}

// MaxForks is the most sandboxes one fork makes.
const MaxForks = 100

// ForkResponse lists the sandboxes a fork made.
type ForkResponse struct {
	Sandboxes []Sandbox `json:"sandboxes"`
}
