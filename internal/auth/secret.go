package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SecretFile is the token-signing secret's file in the data directory.
// Deleting it (and restarting) voids every sandbox token.
const SecretFile = "token.key"

// LoadSecret returns the token-signing secret of dataDir, generating it
// (32 random bytes, hex, mode 0600) on first use. A secret file that group
// or others can read is refused: anyone who reads it can forge tokens.
func LoadSecret(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, SecretFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return newSecret(path)
	}
	if err != nil {
		return nil, fmt.Errorf("token secret: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token secret: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token secret %s is readable by others (mode %#o): chmod 600 it", path, st.Mode().Perm())
	}
	secret, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(secret) < 32 {
		return nil, fmt.Errorf("token secret %s is not 32 or more hex-encoded bytes; delete it to make a new one (this voids every sandbox token)", path)
	}
	return secret, nil
}

func newSecret(path string) ([]byte, error) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process made it first
		return LoadSecret(filepath.Dir(path))
	}
	if err != nil {
		return nil, fmt.Errorf("token secret: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(secret) + "\n")
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("token secret: %w", werr)
	}
	return secret, nil
}

func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
