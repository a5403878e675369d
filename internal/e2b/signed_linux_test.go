//go:build linux

package e2b_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sign is E2B's file URL signature, written out independently of the
// adapter's (the SDK's getSignature).
func sign(path, op, user, token string, exp int64) string {
	raw := path + ":" + op + ":" + user + ":" + token
	if exp != 0 {
		raw += ":" + strconv.FormatInt(exp, 10)
	}
	sum := sha256.Sum256([]byte(raw))
	return "v1_" + strings.TrimRight(base64.StdEncoding.EncodeToString(sum[:]), "=")
}

func signedQuery(path, user, sig string, exp int64) string {
	q := url.Values{"path": {path}, "signature": {sig}}
	if user != "" {
		q.Set("username", user)
	}
	if exp != 0 {
		q.Set("signature_expiration", strconv.FormatInt(exp, 10))
	}
	return "/files?" + q.Encode()
}

// TestSignedFileURLs: a pre-signed download or upload URL works without
// the access token for exactly its sandbox, path, user and operation, and
// until its expiry; anything else is 401.
func TestSignedFileURLs(t *testing.T) {
	s := newStack(t)
	key := s.key(t, "signed").Key
	a := s.create(t, key, `{}`)
	b := s.create(t, key, `{}`)
	for _, sb := range []created{a, b} {
		h := envdHeaders(sb.SandboxID, sb.EnvdAccessToken)
		h["Content-Type"] = "application/octet-stream"
		if st, _, body := s.do(t, "POST", "/files?path=secret.txt", h, []byte("from "+sb.SandboxID)); st != 200 {
			t.Fatalf("write: %d %s", st, body)
		}
	}
	idOnly := func(id string) map[string]string { return map[string]string{"E2b-Sandbox-Id": id} }
	future := time.Now().Add(time.Hour).Unix()
	past := time.Now().Add(-time.Minute).Unix()

	// Positive control: the signed URL downloads, with and without expiry.
	for _, exp := range []int64{0, future} {
		st, _, body := s.do(t, "GET", signedQuery("secret.txt", "", sign("secret.txt", "read", "", a.EnvdAccessToken, exp), exp), idOnly(a.SandboxID), nil)
		if st != 200 || string(body) != "from "+a.SandboxID {
			t.Fatalf("signed download (exp %d): %d %s", exp, st, body)
		}
	}
	// A signed upload writes; the file is there.
	st, _, body := s.do(t, "POST", signedQuery("up.txt", "", sign("up.txt", "write", "", a.EnvdAccessToken, future), future),
		map[string]string{"E2b-Sandbox-Id": a.SandboxID, "Content-Type": "application/octet-stream"}, []byte("uploaded"))
	if st != 200 {
		t.Fatalf("signed upload: %d %s", st, body)
	}
	if st, _, body := s.do(t, "GET", "/files?path=up.txt", envdHeaders(a.SandboxID, a.EnvdAccessToken), nil); st != 200 || string(body) != "uploaded" {
		t.Fatalf("read back: %d %s", st, body)
	}

	good := sign("secret.txt", "read", "", a.EnvdAccessToken, future)
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"no signature, no token", "GET", "/files?path=secret.txt", idOnly(a.SandboxID), 401},
		{"tampered path", "GET", signedQuery("other.txt", "", good, future), idOnly(a.SandboxID), 401},
		{"tampered user", "GET", signedQuery("secret.txt", "root", good, future), idOnly(a.SandboxID), 401},
		{"tampered expiry", "GET", signedQuery("secret.txt", "", good, future+1), idOnly(a.SandboxID), 401},
		{"a read signature used to write", "POST", signedQuery("secret.txt", "", good, future), idOnly(a.SandboxID), 401},
		{"expired", "GET", signedQuery("secret.txt", "", sign("secret.txt", "read", "", a.EnvdAccessToken, past), past), idOnly(a.SandboxID), 401},
		{"sandbox A's signature on B", "GET", signedQuery("secret.txt", "", good, future), idOnly(b.SandboxID), 401},
		{"B's token signing for A", "GET", signedQuery("secret.txt", "", sign("secret.txt", "read", "", b.EnvdAccessToken, future), future), idOnly(a.SandboxID), 401},
		{"a signature made with a guessed token", "GET", signedQuery("secret.txt", "", sign("secret.txt", "read", "", "pdt_guess", future), future), idOnly(a.SandboxID), 401},
		{"a signed URL must name its path", "POST", "/files?signature=" + url.QueryEscape(sign("", "write", "", a.EnvdAccessToken, 0)), idOnly(a.SandboxID), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, body := s.do(t, tc.method, tc.path, tc.hdr, []byte("x"))
			if st != tc.status {
				t.Fatalf("%d %s, want %d", st, body, tc.status)
			}
			if strings.Contains(string(body), "from ") {
				t.Fatalf("the file leaked: %s", body)
			}
		})
	}

	// Killed: the sandbox's signatures die with it (and with its tokens).
	if st, _, body := s.do(t, "DELETE", "/sandboxes/"+a.SandboxID, map[string]string{"X-API-KEY": key}, nil); st != 204 {
		t.Fatalf("kill: %d %s", st, body)
	}
	if st, _, _ := s.do(t, "GET", signedQuery("secret.txt", "", good, future), idOnly(a.SandboxID), nil); st != 401 {
		t.Fatalf("a killed sandbox's signed URL: %d, want 401", st)
	}
}
