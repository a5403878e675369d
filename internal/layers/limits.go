package layers

// Default extraction limits.
const (
	DefaultMaxBytes   = 64 << 30 // file content of one layer
	DefaultMaxEntries = 1 << 20
)

// Limits bound one extraction; zero fields take the defaults.
type Limits struct {
	MaxBytes   int64 // total size of the layer's file contents
	MaxEntries int
}

func (l Limits) norm() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	return l
}

// Stats describes what an extraction wrote.
type Stats struct {
	Entries int
	Bytes   int64 // file content
}
