package template

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultMirror is used when the host's apt configuration names no Debian
// archive mirror.
const DefaultMirror = "http://deb.debian.org/debian"

const (
	maxSourcesFile  = 1 << 20 // bytes read from one apt sources file
	maxSourcesFiles = 256     // files looked at in sources.list.d
	maxMirrorLen    = 2048
)

// detectMirror returns the first Debian archive mirror in aptDir's
// sources.list, then sources.list.d/*.list and *.sources in apt's (lexical)
// order, or DefaultMirror.
func detectMirror(aptDir string) string {
	if m, ok := mirrorFromFile(filepath.Join(aptDir, "sources.list"), false); ok {
		return m
	}
	d := filepath.Join(aptDir, "sources.list.d")
	ents, err := os.ReadDir(d)
	if err != nil {
		return DefaultMirror
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".list") || strings.HasSuffix(n, ".sources") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) > maxSourcesFiles {
		names = names[:maxSourcesFiles]
	}
	for _, n := range names {
		if m, ok := mirrorFromFile(filepath.Join(d, n), strings.HasSuffix(n, ".sources")); ok {
			return m
		}
	}
	return DefaultMirror
}

func mirrorFromFile(path string, deb822 bool) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSourcesFile))
	if err != nil {
		return "", false
	}
	if deb822 {
		return mirrorFromDeb822(string(data))
	}
	return mirrorFromOneLine(string(data))
}

// mirrorFromOneLine parses the one-line format:
// "deb [opt=val ...] URI suite [component...]".
func mirrorFromOneLine(data string) (string, bool) {
	for _, line := range strings.Split(data, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") {
			// Options may contain spaces: skip to the field closing them.
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) == 0 {
				continue
			}
			f = f[1:]
		}
		if len(f) >= 2 && isDebianMirror(f[0]) {
			return strings.TrimRight(f[0], "/"), true
		}
	}
	return "", false
}

// mirrorFromDeb822 parses the deb822 format: stanzas of "Field: value"
// separated by blank lines, continuation lines starting with white space.
func mirrorFromDeb822(data string) (string, bool) {
	var types, uris []string
	enabled := true
	var last *[]string // field a continuation line extends
	flush := func() (string, bool) {
		defer func() { types, uris, enabled, last = nil, nil, true, nil }()
		if !enabled || !contains(types, "deb") {
			return "", false
		}
		for _, u := range uris {
			if isDebianMirror(u) {
				return strings.TrimRight(u, "/"), true
			}
		}
		return "", false
	}
	for _, line := range strings.Split(data, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			if m, ok := flush(); ok {
				return m, true
			}
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last != nil {
				*last = append(*last, strings.Fields(line)...)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			last = nil
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "types":
			types = append(types, strings.Fields(v)...)
			last = &types
		case "uris":
			uris = append(uris, strings.Fields(v)...)
			last = &uris
		case "enabled":
			enabled = !strings.EqualFold(strings.TrimSpace(v), "no")
			last = nil
		default:
			last = nil
		}
	}
	return flush()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isDebianMirror accepts an http(s) URI of a Debian main archive: its last
// path element is "debian" (deb.debian.org/debian, ftp.XX.debian.org/debian,
// a local mirror's /debian), so debian-security, ports and third-party
// repositories are not mistaken for it. URIs with credentials are skipped:
// they would be shown in progress output and template.json.
func isDebianMirror(uri string) bool {
	if checkMirror(uri) != nil {
		return false
	}
	u, _ := url.Parse(uri)
	return filepath.Base(strings.TrimRight(u.Path, "/")) == "debian"
}

var errMirror = errors.New("mirror must be an http:// or https:// URL without credentials")

// checkMirror validates a mirror URL before it becomes an mmdebstrap
// argument: a leading "-" would be parsed as an option (argument
// injection), white space would split it into several apt sources.
func checkMirror(m string) error {
	if m == "" || len(m) > maxMirrorLen {
		return errMirror
	}
	for _, c := range m {
		if c <= ' ' || c == 0x7f {
			return errMirror
		}
	}
	u, err := url.Parse(m)
	if err != nil {
		return fmt.Errorf("%w: %v", errMirror, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return errMirror
	}
	return nil
}
