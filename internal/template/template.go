package template

import "time"

// Overlay is a host directory shown at Path inside the sandbox as the lower
// layer of its own overlay (writes go to the sandbox's writable layer).
type Overlay struct {
	Path   string // absolute path inside the sandbox, e.g. "/usr"
	Source string // host directory
}

// Template is a root filesystem a sandbox can start from.
type Template struct {
	Name        string
	Root        string    // host directory shown as "/" (lower layer)
	Overlays    []Overlay // further lower layers at sub-paths (host template: /usr)
	Description string
	CreatedAt   time.Time
	SizeBytes   int64 // on-disk size of Root (0 when not computed)
}

// Info is what `paddock template ls` shows.
type Info struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	SizeBytes   int64     `json:"size_bytes"`
	Ready       bool      `json:"ready"`
}
