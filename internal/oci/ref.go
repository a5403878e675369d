package oci

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/paddockhq/paddock/internal/errs"
)

// MaxRefLen bounds an image reference.
const MaxRefLen = 512

// ParseRef parses an image reference ("debian:12", "ghcr.io/o/i@sha256:...",
// "127.0.0.1:5000/app"). A reference without a registry means Docker
// Hub, without a tag ":latest". Parsing is strict (go-containerregistry's
// StrictValidation is not used because it refuses the implicit registry
// and tag that users type; the grammar itself is still enforced).
func ParseRef(s string) (name.Reference, error) {
	if s == "" {
		return nil, errs.Invalid("empty image reference")
	}
	if len(s) > MaxRefLen {
		return nil, errs.Invalid("image reference over %d bytes", MaxRefLen)
	}
	if strings.ContainsAny(s, " \t\r\n\x00") || strings.Contains(s, "://") {
		return nil, errs.Invalid("invalid image reference %s: write it as [REGISTRY/]REPOSITORY[:TAG|@DIGEST]", quoteRef(s))
	}
	ref, err := name.ParseReference(s)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInvalid, err, "invalid image reference %s: write it as [REGISTRY/]REPOSITORY[:TAG|@DIGEST]", quoteRef(s))
	}
	return ref, nil
}

func quoteRef(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' {
			return '?'
		}
		return r
	}, s) + `"`
}
