package audit

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/internal/durable"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Files in the audit directory.
const (
	KeyFile    = "signing.key" // ed25519 private key, PKCS#8 PEM, 0600
	PubKeyFile = "signing.pub" // its public key, PKIX PEM: all an auditor needs
	HeadFile   = "head.json"
)

// Fingerprint names a public key in records: "ed25519:" and the first 16
// hex digits of its SHA-256.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:8])
}

// loadOrCreateKey returns the log's signing key. A missing key is created
// only for a new log: replacing the key of an existing log would let
// anyone who deleted it re-sign history, so that is refused.
func loadOrCreateKey(dir string, logExists bool) (ed25519.PrivateKey, error) {
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		return parsePrivateKey(b)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read audit signing key: %w", err)
	}
	if logExists {
		return nil, fmt.Errorf("the audit log in %s exists but its signing key %s is missing: restore the key, or move the audit directory aside (keep it: it is evidence) to start a new log", dir, KeyFile)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate audit signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode audit signing key: %w", err)
	}
	if err := writeFileSync(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600, true); err != nil {
		return nil, fmt.Errorf("write audit signing key: %w", err)
	}
	if err := writePublicKey(filepath.Join(dir, PubKeyFile), pub); err != nil {
		return nil, err
	}
	return priv, nil
}

// ensurePublicKey (re)writes signing.pub if it is missing, so that it
// always sits next to the log.
func ensurePublicKey(dir string, pub ed25519.PublicKey) error {
	path := filepath.Join(dir, PubKeyFile)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return writePublicKey(path, pub)
}

func writePublicKey(path string, pub ed25519.PublicKey) error {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return fmt.Errorf("encode audit public key: %w", err)
	}
	if err := writeFileSync(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644, false); err != nil {
		return fmt.Errorf("write audit public key: %w", err)
	}
	return nil
}

func parsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("audit signing key: not a PEM PRIVATE KEY")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("audit signing key: %w", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("audit signing key: not an ed25519 key")
	}
	return priv, nil
}

// ParsePublicKey reads a public key: PKIX PEM (signing.pub), or 32 bytes
// in hex or base64.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(b); blk != nil {
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, errors.New("public key: not an ed25519 key")
		}
		return pub, nil
	}
	s := strings.TrimSpace(string(b))
	if raw, err := hex.DecodeString(s); err == nil && len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	if raw, err := base64.StdEncoding.DecodeString(s); err == nil && len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	return nil, errors.New("public key: want a PEM PUBLIC KEY, or 32 bytes in hex or base64")
}

// LoadPublicKey reads a public key file.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read public key: %w", err)
	}
	return ParsePublicKey(b)
}

// The signed messages. They are domain-separated so that a checkpoint
// signature can never pass for a head signature or the reverse.
func checkpointMessage(seq uint64, hash string) []byte {
	return []byte("paddock-audit-checkpoint-v1\n" + strconv.FormatUint(seq, 10) + "\n" + hash + "\n")
}

func headMessage(seq uint64, hash, tm string) []byte {
	return []byte("paddock-audit-head-v1\n" + strconv.FormatUint(seq, 10) + "\n" + hash + "\n" + tm + "\n")
}

// writeFileSync writes a new file durably; excl refuses to replace one.
func writeFileSync(path string, data []byte, perm os.FileMode, excl bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if excl {
		flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return durable.SyncDir(filepath.Dir(path))
}
