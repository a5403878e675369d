package oci

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/paddockhq/paddock/internal/errs"
)

// Credential is what a registry is logged in with. Exactly one of
// Username+Password, IdentityToken (an OAuth2 refresh token traded for a
// bearer token) or RegistryToken (a bearer token sent as is) is used.
type Credential struct {
	Username, Password string
	IdentityToken      string
	RegistryToken      string
}

// CredentialFunc returns the credential for registry host ("ghcr.io",
// "index.docker.io", "127.0.0.1:5000"); a zero Credential and nil error
// means anonymous. Phase 2 binds it to the server's secret store.
type CredentialFunc func(ctx context.Context, registry string) (Credential, error)

const maxConfigFile = 1 << 20

// DockerConfig reads credentials from a Docker config.json file (the
// "auths" map: "auth" as base64 user:password, or username/password,
// identitytoken, registrytoken). Credential helpers and credsStore are not
// run: the server executes no program a config file names.
func DockerConfig(path string) (CredentialFunc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read the registry auth file")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "cannot read the registry auth file")
	}
	return ParseDockerConfig(data)
}

// ParseDockerConfig parses config.json content (see DockerConfig).
func ParseDockerConfig(data []byte) (CredentialFunc, error) {
	if len(data) > maxConfigFile {
		return nil, errs.Invalid("registry auth file over %d bytes", maxConfigFile)
	}
	var cfg struct {
		Auths map[string]struct {
			Auth          string `json:"auth"`
			Username      string `json:"username"`
			Password      string `json:"password"`
			IdentityToken string `json:"identitytoken"`
			RegistryToken string `json:"registrytoken"`
		} `json:"auths"`
	}
	// The error text of encoding/json could quote the file's content,
	// which holds secrets: it stays out of the message and the cause.
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, errs.Invalid("the registry auth file is not valid JSON in Docker's config.json format")
	}
	creds := map[string]Credential{}
	for host, a := range cfg.Auths {
		c := Credential{Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			user, pass, ok := strings.Cut(string(raw), ":")
			if err != nil || !ok {
				return nil, errs.Invalid("registry auth file: the \"auth\" entry for %s is not base64 of user:password", quoteRef(host))
			}
			c.Username, c.Password = user, pass
		}
		creds[normalizeHost(host)] = c
	}
	return func(_ context.Context, registry string) (Credential, error) {
		return creds[normalizeHost(registry)], nil
	}, nil
}

// normalizeHost maps the spellings Docker accepts for a registry key
// ("https://index.docker.io/v1/", "docker.io") to one host.
func normalizeHost(h string) string {
	h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	h = strings.ToLower(h)
	switch h {
	case "docker.io", "registry-1.docker.io":
		return "index.docker.io"
	}
	return h
}

// keychain adapts a CredentialFunc to go-containerregistry.
type keychain struct {
	ctx context.Context
	fn  CredentialFunc
}

func (k keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if k.fn == nil {
		return authn.Anonymous, nil
	}
	c, err := k.fn(k.ctx, r.RegistryStr())
	if err != nil {
		// The cause may come from the secret store: public text stays generic.
		return nil, errs.Wrap(errs.CodeUnavailable, err, "cannot look up the credentials for registry %s", quoteRef(r.RegistryStr()))
	}
	if c == (Credential{}) {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{
		Username: c.Username, Password: c.Password,
		IdentityToken: c.IdentityToken, RegistryToken: c.RegistryToken,
	}), nil
}
