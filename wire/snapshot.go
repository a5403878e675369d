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
	// Memory: it also holds a gVisor checkpoint image of the sandbox's
	// processes (MemoryBytes, counted in the tenant's snapshot quota with
	// Bytes); a create from it continues those processes.
	Memory      bool  `json:"memory,omitempty"`
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
}

// CreateSnapshotRequest is POST /v1/sandboxes/{id}/snapshots.
type CreateSnapshotRequest struct {
	Name string `json:"name"`
	// Memory also checkpoints the sandbox's processes and memory (gVisor
	// only; native refuses with why).
	Memory bool `json:"memory,omitempty"`
}

// SnapshotList is GET /v1/snapshots.
type SnapshotList struct {
	Snapshots []Snapshot `json:"snapshots"`
}

// ForkRequest is POST /v1/sandboxes/{id}/fork.
type ForkRequest struct {
	Count int `json:"count"` // 1 … MaxForks; 0 means 1
	// Memory: each fork continues the source's running processes from one
	// checkpoint (gVisor only; native refuses with why).
	Memory bool `json:"memory,omitempty"`
}

// MaxForks is the most sandboxes one fork makes.
const MaxForks = 100

// ForkResponse lists the sandboxes a fork made.
type ForkResponse struct {
	Sandboxes []Sandbox `json:"sandboxes"`
}
