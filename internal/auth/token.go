package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// Credential prefixes. A secret scanner (or a person) recognises each.
const (
	// E2BPrefix starts keys in the E2B form ("e2b_" + 40 hex digits), for
	// E2B SDKs that check the shape of a key.
	E2BPrefix = "e2b_"
	// TokenPrefix starts sandbox-scoped tokens.
	TokenPrefix = "pdt_"
)

// MaxCredentialLen bounds a bearer credential; longer ones are refused
// before any work is done on them.
const MaxCredentialLen = 512

// Kind is what a bearer credential looks like.
type Kind int

// Kinds.
const (
	KindOpaque Kind = iota // none of the shapes below (e.g. a $PADDOCK_ADMIN_KEY)
	KindKey                // "pdk_" + 32 base32 characters
	KindE2BKey             // "e2b_" + 40 lower-case hex digits
	KindToken              // "pdt_" + base64url(claims ‖ HMAC)
)

// Claims are what a sandbox-scoped token says. Times have second
// precision.
type Claims struct {
	TokenID   string
	KeyID     string // the key that minted it
	Sandbox   string
	Scopes    []Scope
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// Parsed is a credential taken apart (not yet verified).
type Parsed struct {
	Kind   Kind
	Claims Claims // KindToken only
	body   []byte // KindToken: the signed bytes
	mac    []byte // KindToken: their HMAC
}

// Token layout (version 1), all big-endian:
//
//	version(1)=1 | issued unix s(8) | expires unix s(8) | scopes bitmask(1) |
//	token id(10) | len(1) key id | len(1) sandbox id | HMAC-SHA256(32)
const (
	tokenVersion  = 1
	tokenIDBytes  = 10
	tokenFixed    = 1 + 8 + 8 + 1 + tokenIDBytes
	macLen        = sha256.Size
	maxIDField    = 64
	tokenIDPrefix = "tok_"
)

var scopeBits = []struct {
	s   Scope
	bit byte
}{{ScopeRead, 1}, {ScopeWrite, 2}, {ScopeExec, 4}}

var (
	errMalformed = errors.New("malformed credential")
	tokenB64     = base64.RawURLEncoding.Strict()
)

// ParseToken classifies a bearer credential and, for a sandbox token,
// decodes its claims. It verifies nothing; an error means the credential
// has a known prefix but not its shape.
func ParseToken(s string) (Parsed, error) {
	if s == "" || len(s) > MaxCredentialLen {
		return Parsed{}, errMalformed
	}
	switch {
	case strings.HasPrefix(s, KeyPrefix):
		rest := s[len(KeyPrefix):]
		if len(rest) != 32 || !allIn(rest, "abcdefghijklmnopqrstuvwxyz234567") {
			return Parsed{}, errMalformed
		}
		return Parsed{Kind: KindKey}, nil
	case strings.HasPrefix(s, E2BPrefix):
		rest := s[len(E2BPrefix):]
		if len(rest) != 40 || !allIn(rest, "0123456789abcdef") {
			return Parsed{}, errMalformed
		}
		return Parsed{Kind: KindE2BKey}, nil
	case strings.HasPrefix(s, TokenPrefix):
		return parseTokenBody(s[len(TokenPrefix):])
	}
	return Parsed{Kind: KindOpaque}, nil
}

func parseTokenBody(enc string) (Parsed, error) {
	// Go's base64 decoder skips \r and \n: without this check one token
	// would have many spellings (and a spelling is what people compare,
	// log and revoke by).
	if !allIn(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") {
		return Parsed{}, errMalformed
	}
	raw, err := tokenB64.DecodeString(enc)
	if err != nil || len(raw) < tokenFixed+2+macLen {
		return Parsed{}, errMalformed
	}
	body, mac := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if body[0] != tokenVersion {
		return Parsed{}, errMalformed
	}
	issued := binary.BigEndian.Uint64(body[1:9])
	expires := binary.BigEndian.Uint64(body[9:17])
	bits := body[17]
	if issued > 1<<40 || expires > 1<<40 || expires <= issued {
		return Parsed{}, errMalformed
	}
	var scopes []Scope
	var known byte
	for _, sb := range scopeBits {
		known |= sb.bit
		if bits&sb.bit != 0 {
			scopes = append(scopes, sb.s)
		}
	}
	if bits == 0 || bits&^known != 0 {
		return Parsed{}, errMalformed
	}
	c := Claims{Scopes: scopes, IssuedAt: time.Unix(int64(issued), 0).UTC(), ExpiresAt: time.Unix(int64(expires), 0).UTC()}
	c.TokenID = tokenIDPrefix + keyEncoding.EncodeToString(body[18:tokenFixed])
	rest := body[tokenFixed:]
	var ok bool
	if c.KeyID, rest, ok = lenField(rest); !ok {
		return Parsed{}, errMalformed
	}
	if c.Sandbox, rest, ok = lenField(rest); !ok || len(rest) != 0 {
		return Parsed{}, errMalformed
	}
	return Parsed{Kind: KindToken, Claims: c, body: body, mac: mac}, nil
}

// lenField reads a length-prefixed id of [A-Za-z0-9_-], 1 to 64 bytes.
func lenField(b []byte) (string, []byte, bool) {
	if len(b) < 1 {
		return "", nil, false
	}
	n := int(b[0])
	if n < 1 || n > maxIDField || len(b) < 1+n {
		return "", nil, false
	}
	s := string(b[1 : 1+n])
	if !allIn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") {
		return "", nil, false
	}
	return s, b[1+n:], true
}

// encodeClaims lays c out as a token body; the token id is taken from c
// if set (tests), otherwise drawn at random.
func encodeClaims(c *Claims) ([]byte, error) {
	if len(c.KeyID) < 1 || len(c.KeyID) > maxIDField || len(c.Sandbox) < 1 || len(c.Sandbox) > maxIDField {
		return nil, errMalformed
	}
	var bits byte
	for _, s := range c.Scopes {
		found := false
		for _, sb := range scopeBits {
			if sb.s == s {
				bits |= sb.bit
				found = true
			}
		}
		if !found {
			return nil, errMalformed
		}
	}
	if bits == 0 {
		return nil, errMalformed
	}
	var id [tokenIDBytes]byte
	if c.TokenID != "" {
		raw, err := keyEncoding.DecodeString(strings.TrimPrefix(c.TokenID, tokenIDPrefix))
		if err != nil || len(raw) != tokenIDBytes {
			return nil, errMalformed
		}
		copy(id[:], raw)
	} else {
		_, _ = rand.Read(id[:])
		c.TokenID = tokenIDPrefix + keyEncoding.EncodeToString(id[:])
	}
	b := make([]byte, 0, tokenFixed+2+len(c.KeyID)+len(c.Sandbox))
	b = append(b, tokenVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(c.IssuedAt.Unix()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.ExpiresAt.Unix()))
	b = append(b, bits)
	b = append(b, id[:]...)
	b = append(b, byte(len(c.KeyID)))
	b = append(b, c.KeyID...)
	b = append(b, byte(len(c.Sandbox)))
	b = append(b, c.Sandbox...)
	return b, nil
}

// tokenMAC signs a token body. binding ties the token to something the
// verifier knows besides the secret (the bootstrap admin key's hash for
// tokens it mints, so replacing that key voids them); a domain prefix
// keeps these MACs apart from any other use of the secret.
func tokenMAC(secret, body, binding []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("paddock sandbox token v1\x00"))
	m.Write(body)
	m.Write(binding)
	return m.Sum(nil)
}

func encodeToken(body, mac []byte) string {
	return TokenPrefix + tokenB64.EncodeToString(append(append([]byte{}, body...), mac...))
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// NewE2BKey returns a fresh random key in the E2B form: "e2b_" and 160
// random bits in hex.
func NewE2BKey() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return E2BPrefix + hex.EncodeToString(b[:])
}
