package wire

import "time"

// VolumeMount is one entry of a spec's volumes: volume Name mounted at
// Path (absolute) in the sandbox, read-only if ReadOnly.
type VolumeMount struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// Volume is one volume (docs/state.md, "Volumes").
type Volume struct {
	Name      string    `json:"name"`
	SizeMB    int64     `json:"size_mb"`    // its quota
	UsedBytes int64     `json:"used_bytes"` // ext4's own metadata included
	CreatedAt time.Time `json:"created_at"`
	// Attached are the sandboxes it is mounted in.
	Attached []VolumeAttachment `json:"attached"`
}

// VolumeAttachment is one sandbox a volume is mounted in.
type VolumeAttachment struct {
	Sandbox  string `json:"sandbox"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// CreateVolumeRequest is POST /v1/volumes.
type CreateVolumeRequest struct {
	Name   string `json:"name"`
	SizeMB int64  `json:"size_mb"` // 16 … the server's ceiling (default 1024)
}

// VolumeList is GET /v1/volumes.
type VolumeList struct {
	Volumes []Volume `json:"volumes"`
}

// MaxVolumeMounts is the most volumes one sandbox mounts.
const MaxVolumeMounts = 16
