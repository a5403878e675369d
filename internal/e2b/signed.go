package e2b

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
)

// Pre-signed file URLs (the SDK's downloadUrl and uploadUrl): a GET or
// POST /files whose query carries signature (and, optionally,
// signature_expiration) instead of an X-Access-Token header. E2B's scheme,
// as the SDK computes it:
//
//	signature = "v1_" + base64(sha256(path:op:user:envdAccessToken[:expiration])), padding trimmed
//
// with op "read" (download) or "write" (upload), path and user exactly
// as they appear in the URL's path and username parameters ("" when
// absent), and expiration in Unix seconds. Verifying one needs the access
// token itself, which Paddock stores only as a hash: the adapter keeps the
// tokens it issued per sandbox in memory (a few, the newest; dropped when
// the sandbox is killed). A URL whose signature matches one of them acts
// as that token — the gate then authenticates the token (expired or
// revoked: 401) and checks it is this sandbox's — for that path, user and
// operation only. A signed URL is a bearer capability (docs/security.md).
// After a restart the adapter holds no tokens: URLs signed before it are
// refused until the client reconnects (connect issues a new token).

// Bounds of the issued-token memory.
const (
	signTokensPerSandbox = 8
	signMaxSandboxes     = 20000
)

// Signed URL errors.
var (
	errBadSignature     = errs.New(errs.CodeUnauthenticated, "the file URL's signature is not valid for this sandbox, path, user and operation")
	errExpiredSignature = errs.New(errs.CodeUnauthenticated, "the file URL's signature has expired")
)

// issued remembers the access tokens minted per sandbox, newest last.
type issued struct {
	mu sync.Mutex
	by map[string][]string
}

func (i *issued) add(id, tok string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.by == nil {
		i.by = map[string][]string{}
	}
	if _, ok := i.by[id]; !ok && len(i.by) >= signMaxSandboxes {
		i.pruneLocked()
		if len(i.by) >= signMaxSandboxes {
			for k := range i.by { // full of live tokens: forget an arbitrary sandbox's
				delete(i.by, k)
				break
			}
		}
	}
	toks := append(i.by[id], tok)
	if len(toks) > signTokensPerSandbox {
		toks = append([]string(nil), toks[len(toks)-signTokensPerSandbox:]...)
	}
	i.by[id] = toks
}

// pruneLocked forgets tokens that have expired.
func (i *issued) pruneLocked() {
	now := time.Now()
	for id, toks := range i.by {
		kept := toks[:0]
		for _, t := range toks {
			if p, err := auth.ParseToken(t); err == nil && p.Kind == auth.KindToken && now.Before(p.Claims.ExpiresAt) {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			delete(i.by, id)
		} else {
			i.by[id] = kept
		}
	}
}

func (i *issued) drop(id string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.by, id)
}

func (i *issued) tokens(id string) []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]string(nil), i.by[id]...)
}

// fileSignature computes E2B's signature of a file URL.
func fileSignature(path, op, user, token, expiration string) string {
	raw := path + ":" + op + ":" + user + ":" + token
	if expiration != "" {
		raw += ":" + expiration
	}
	sum := sha256.Sum256([]byte(raw))
	return "v1_" + strings.TrimRight(base64.StdEncoding.EncodeToString(sum[:]), "=")
}

// fileCredential is the credential of a /files request: its access token,
// or, for a signed URL, the issued token its signature was made with.
func (s *Server) fileCredential(r *http.Request) (string, error) {
	q := r.URL.Query()
	sig := q.Get("signature")
	if strings.TrimSpace(r.Header.Get(hdrAccessToken)) != "" || sig == "" {
		if q.Has("signature_expiration") && sig == "" {
			return "", errs.Invalid("signature_expiration without a signature")
		}
		return accessToken(r)
	}
	if p := r.Header.Get(hdrSandboxPort); p != "" && p != EnvdPort {
		return accessToken(r) // its refusal
	}
	for _, k := range []string{"path", "username", "signature", "signature_expiration"} {
		if len(q[k]) > 1 {
			return "", errs.Invalid("query parameter %s is given %d times", k, len(q[k]))
		}
	}
	path := q.Get("path")
	if path == "" {
		// Unsigned part file names would let the URL write anywhere.
		return "", errs.Invalid("a signed file URL must name its path")
	}
	op := "read"
	if r.Method == http.MethodPost {
		op = "write"
	}
	exp := q.Get("signature_expiration")
	if exp != "" {
		n, err := strconv.ParseInt(exp, 10, 64)
		if err != nil || n < 0 {
			return "", errBadSignature
		}
		if time.Now().Unix() > n {
			return "", errExpiredSignature
		}
	}
	id := r.Header.Get(hdrSandboxID)
	for _, tok := range s.signed.tokens(id) {
		if subtle.ConstantTimeCompare([]byte(fileSignature(path, op, q.Get("username"), tok, exp)), []byte(sig)) == 1 {
			return tok, nil
		}
	}
	return "", errBadSignature
}
