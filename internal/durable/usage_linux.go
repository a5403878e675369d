package durable

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

// Usage is du: the allocated blocks under root, a hard-linked inode
// counted once.
func Usage(root string) (int64, error) {
	type key struct{ dev, ino uint64 }
	seen := make(map[key]bool)
	var total int64
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if st.Nlink > 1 && !fi.IsDir() {
			k := key{uint64(st.Dev), st.Ino}
			if seen[k] {
				return nil
			}
			seen[k] = true
		}
		total += st.Blocks * 512
		return nil
	})
	return total, err
}
