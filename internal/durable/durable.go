package durable

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// SyncDir fsyncs a directory, so that a rename or create in it survives a
// crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFile writes dir/name through a synced temp file in dir and a
// rename, then syncs dir: a reader sees the old content or the new one,
// never a torn file. The temp file is removed on failure.
func WriteFile(dir, name string, data []byte, perm os.FileMode) error {
	tmp := filepath.Join(dir, "."+name+"."+RandHex())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// RandHex is 16 random hex digits, for temp-file names.
func RandHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}
