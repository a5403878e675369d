package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/keyfile"
)

// KeyFile is the encryption key's file in the data directory. Losing it
// loses every stored secret (and the sandboxes' egress CAs).
const KeyFile = "secrets.key"

// sealVersion starts every sealed value, so that the format (or the key)
// can change without guessing what an old row is.
const sealVersion = 1

// Key encrypts values at rest: AES-256-GCM, a random 96-bit nonce per
// value, additional data binding a ciphertext to where it belongs.
type Key struct{ aead cipher.AEAD }

// NewKey returns a Key for 32 raw bytes.
func NewKey(raw []byte) (*Key, error) {
	if len(raw) != 32 {
		return nil, errors.New("secret key: want 32 bytes")
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Key{aead: aead}, nil
}

// LoadKey returns the key of dataDir, generating it (32 random bytes, hex,
// mode 0600) on first use. A key file that group or others can read is
// refused: whoever reads it can decrypt every secret.
func LoadKey(dataDir string) (*Key, error) {
	raw, err := keyfile.Load(filepath.Join(dataDir, KeyFile), "secret key",
		"it cannot be regenerated: the secrets encrypted with it would be lost")
	if err != nil {
		return nil, err
	}
	if len(raw) != keyfile.Size {
		return nil, fmt.Errorf("secret key %s is not %d hex-encoded bytes (it cannot be regenerated: the secrets encrypted with it would be lost)", filepath.Join(dataDir, KeyFile), keyfile.Size)
	}
	return NewKey(raw)
}

// Seal encrypts plaintext; aad (not stored) must be given again to Open.
func (k *Key) Seal(aad, plaintext []byte) []byte {
	ns := k.aead.NonceSize()
	out := make([]byte, 1+ns, 1+ns+len(plaintext)+k.aead.Overhead())
	out[0] = sealVersion
	_, _ = rand.Read(out[1:])
	return k.aead.Seal(out, out[1:1+ns], plaintext, aad)
}

// Open decrypts what Seal made with the same aad.
func (k *Key) Open(aad, sealed []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	if len(sealed) < 1+ns+k.aead.Overhead() || sealed[0] != sealVersion {
		return nil, errors.New("sealed value: unknown format")
	}
	pt, err := k.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], aad)
	if err != nil {
		return nil, errors.New("sealed value: does not decrypt (wrong key, or moved or altered in the database)")
	}
	return pt, nil
}
