package auth

import (
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock/internal/keyfile"
)

// SecretFile is the token-signing secret's file in the data directory.
// Deleting it (and restarting) voids every sandbox token.
const SecretFile = "token.key"

// LoadSecret returns the token-signing secret of dataDir, generating it
// (32 random bytes, hex, mode 0600) on first use. A secret file that group
// or others can read is refused: anyone who reads it can forge tokens.
func LoadSecret(dataDir string) ([]byte, error) {
	return keyfile.Load(filepath.Join(dataDir, SecretFile), "token secret",
		"delete it to make a new one (this voids every sandbox token)")
}

func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
