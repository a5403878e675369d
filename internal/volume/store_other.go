//go:build !linux

package volume

import (
	"io"
	"log/slog"
	"os"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/wire"
)

// Options configure a Store.
type Options struct {
	Dir     string
	MaxSize int64
	Log     *slog.Logger
}

// Store is the volume store; volumes need Linux (loop devices, ext4).
type Store struct{}

func unsupported() error { return errs.New(errs.CodeUnsupported, "volumes need Linux") }

// Open fails: volumes need Linux.
func Open(Options) (*Store, error) { return nil, unsupported() }

func (*Store) Create(string, string, int64) (Volume, error)   { return Volume{}, unsupported() }
func (*Store) Get(string, string) (Volume, error)             { return Volume{}, unsupported() }
func (*Store) List(string) ([]Volume, error)                  { return nil, unsupported() }
func (*Store) Bytes(string) (int64, error)                    { return 0, unsupported() }
func (*Store) DataDir(string, string) (string, error)         { return "", unsupported() }
func (*Store) Acquire(string, string) (string, func(), error) { return "", nil, unsupported() }
func (*Store) Usage(string, string) (int64, int64, error)     { return 0, 0, unsupported() }
func (*Store) Delete(string, string) error                    { return unsupported() }
func (*Store) Close() error                                   { return nil }

// FS is one volume's tree.
type FS struct{}

// OpenFS fails: volumes need Linux.
func OpenFS(string) (*FS, error) { return nil, unsupported() }

func (*FS) Close() error                                 { return nil }
func (*FS) Stat(string) (wire.FileInfo, error)           { return wire.FileInfo{}, unsupported() }
func (*FS) Read(string) (*os.File, wire.FileInfo, error) { return nil, wire.FileInfo{}, unsupported() }
func (*FS) Write(string, io.Reader, int64, uint32, int, int) (wire.FileInfo, error) {
	return wire.FileInfo{}, unsupported()
}
func (*FS) Mkdir(string, bool, uint32, int, int) (wire.FileInfo, error) {
	return wire.FileInfo{}, unsupported()
}
func (*FS) List(string, int) (wire.ListResult, error) { return wire.ListResult{}, unsupported() }
func (*FS) Remove(string, bool) (int64, error)        { return 0, unsupported() }
