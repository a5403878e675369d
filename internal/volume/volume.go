package volume

import (
	"encoding/hex"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
)

// Volume is one volume's record.
type Volume struct {
	Tenant    string    `json:"tenant"`
	Name      string    `json:"name"`
	SizeBytes int64     `json:"size_bytes"`
	CreatedAt time.Time `json:"created_at"`
}

// Size bounds. Below MinSize ext4's journal and metadata would take most
// of the volume; MaxSize is the default ceiling of one volume, because its
// whole size is reserved on the host's disk when it is made.
const (
	MinSize        int64 = 16 << 20
	DefaultMaxSize int64 = 64 << 30
	MaxName              = 63
	// MaxPerTenant bounds how many volumes one tenant keeps (each is a
	// mount on the host).
	MaxPerTenant = 256
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidName checks a volume name: letters, digits, '.', '_', '-', first a
// letter or digit, at most MaxName, no "..". A name becomes a file name
// on the host, so '/' and ".." (path traversal) must never get through.
func ValidName(name string) error {
	switch {
	case name == "":
		return errs.Invalid("a volume needs a name")
	case len(name) > MaxName:
		return errs.Invalid("a volume name is at most %d characters", MaxName)
	case !utf8.ValidString(name) || !nameRE.MatchString(name) || strings.Contains(name, ".."):
		return errs.Invalid("a volume name has only letters, digits, '.', '_' and '-', starts with a letter or digit and has no \"..\"")
	}
	return nil
}

func tenantDir(tenant string) string { return hex.EncodeToString([]byte(tenant)) }

const (
	maxPath  = 4096
	maxDepth = 256
	// MaxList bounds one listing.
	MaxList = 10000
)

// CleanPath makes p a path relative to the volume's root ("" is the root
// itself): "/a/../b" is "b", and ".." cannot climb above the root.
func CleanPath(p string) (string, error) {
	if len(p) > maxPath {
		return "", errs.Invalid("path is longer than %d bytes", maxPath)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errs.Invalid("path contains a NUL byte")
	}
	c := path.Clean("/" + p)[1:]
	if strings.Count(c, "/") >= maxDepth {
		return "", errs.Invalid("path is nested more than %d deep", maxDepth)
	}
	return c, nil
}
