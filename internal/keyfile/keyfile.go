// Package keyfile keeps a server's symmetric keys in its data directory:
// random bytes, hex-encoded, mode 0600, made on first use.
package keyfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Size is the length of a key made here, in bytes.
const Size = 32

// Load returns the key in path, making it on first use. what names the key
// in errors ("token secret"); hint ends the error about a corrupt file
// (what deleting it would do). A file that group or others can read is
// refused: whoever reads a key holds what it protects.
func Load(path, what, hint string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return create(path, what, hint)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s %s is readable by others (mode %#o): chmod 600 it", what, path, st.Mode().Perm())
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) < Size {
		return nil, fmt.Errorf("%s %s is not %d or more hex-encoded bytes; %s", what, path, Size, hint)
	}
	return key, nil
}

func create(path, what, hint string) ([]byte, error) {
	key := make([]byte, Size)
	_, _ = rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process made it first
		return Load(path, what, hint)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	_, werr := f.WriteString(hex.EncodeToString(key) + "\n")
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("%s: %w", what, werr)
	}
	return key, nil
}
