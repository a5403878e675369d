package disk

// Layer is one sandbox's writable directory.
type Layer struct {
	ID  string
	Dir string // host path, owned by the sandbox's root uid/gid, mode 0700
}

// Usage is what a layer consumes.
type Usage struct {
	Bytes, Inodes           int64
	BytesLimit, InodesLimit int64
}

// Store creates and removes layers.
type Store interface {
	// Kind is "xfs" or "tmpfs".
	Kind() string
	// Create makes the layer for id with the given quotas, owned by uid/gid.
	Create(id string, bytes, inodes int64, uid, gid int) (*Layer, error)
	// Get returns an existing layer (after a restart).
	Get(id string) (*Layer, error)
	// Usage reads a layer's consumption.
	Usage(id string) (Usage, error)
	// Remove deletes the layer and everything in it; a missing layer is not
	// an error. It must not follow symlinks out of the layer.
	Remove(id string) error
	// List returns the ids of every layer, for the orphan sweep.
	List() ([]string, error)
	// Close unmounts what the store mounted (the XFS image); layers persist.
	Close() error
}
