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
	Root        string    // host directory shown as "/" (lower layer); empty for image templates
	Overlays    []Overlay // further lower layers at sub-paths (host template: /usr)
	Description string
	CreatedAt   time.Time
	SizeBytes   int64 // on-disk size of Root, or of all Layers (0 when not computed)

	// Image templates (Kind "image"): the root is an overlay of Layers —
	// host directories in the layer store, top first, exactly overlayfs'
	// lowerdir order — with the sandbox's writable layer as upperdir.
	Kind     string
	Layers   []string
	DiffIDs  []string  // the layers' diff ids, bottom first
	Defaults *Defaults // what sandboxes of this template default to
	Source   Source
	Tenant   string // the owning tenant; "" for a shared template
}

// Info is what `paddock template ls` shows.
type Info struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	SizeBytes   int64     `json:"size_bytes"`
	Ready       bool      `json:"ready"`
	Kind        string    `json:"kind,omitempty"`         // "image" for OCI templates
	Layers      int       `json:"layers,omitempty"`       // image templates: layer count
	SharedBytes int64     `json:"shared_bytes,omitempty"` // of SizeBytes, in layers other templates hold too
	Tenant      string    `json:"tenant,omitempty"`       // image templates: the owner ("" shared)
	Source      Source    `json:"source"`                 // image templates: where it came from
}
