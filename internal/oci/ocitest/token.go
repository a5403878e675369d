package ocitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tokenAuth prepares Docker token auth for r: the token handler and the
// registry's auth config section. go-containerregistry only accepts a
// loopback realm on the registry's own host:port (an SSRF guard), so the
// token endpoint is served by a front proxy at the registry's address
// (see Start), at /token.
func tokenAuth(t testing.TB, r *Registry, dir, front string) (string, http.Handler) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "paddock-test-token"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "token.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	const service, issuer = "paddock-test", "paddock-test-issuer"
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, pass, ok := req.BasicAuth()
		if !ok || user != r.User || pass != r.Password {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var access []map[string]any
		for _, scope := range req.URL.Query()["scope"] {
			parts := strings.Split(scope, ":")
			if len(parts) != 3 {
				continue
			}
			access = append(access, map[string]any{"type": parts[0], "name": parts[1], "actions": strings.Split(parts[2], ",")})
		}
		now := time.Now()
		claims := map[string]any{
			"iss": issuer, "sub": user, "aud": service, "jti": randHex(8),
			"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(5 * time.Minute).Unix(),
			"access": access,
		}
		tok, err := signES256(key, der, claims)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		r.TokensIssued.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"token": tok, "access_token": tok, "expires_in": 300})
	})
	return fmt.Sprintf("auth:\n  token:\n    realm: http://%s/token\n    service: %s\n    issuer: %s\n    rootcertbundle: %s\n", front, service, issuer, bundle), h
}

// serveFront serves token at /token and proxies the rest to the registry.
func serveFront(t testing.TB, l net.Listener, token http.Handler, registry string) {
	u, _ := url.Parse("http://" + registry)
	mux := http.NewServeMux()
	mux.Handle("/token", token)
	mux.Handle("/", httputil.NewSingleHostReverseProxy(u))
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

func signES256(key *ecdsa.PrivateKey, certDER []byte, claims map[string]any) (string, error) {
	hdr, _ := json.Marshal(map[string]any{"typ": "JWT", "alg": "ES256", "x5c": []string{base64.StdEncoding.EncodeToString(certDER)}})
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(hdr) + "." + enc.EncodeToString(body)
	sum := sha256.Sum256([]byte(signing))
	rr, ss, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	rr.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	return signing + "." + enc.EncodeToString(sig), nil
}
