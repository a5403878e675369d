package template

import (
	"path/filepath"
	"strings"
)

// maxMountInfo bounds how much of /proc/self/mountinfo is read.
const maxMountInfo = 16 << 20

// parseMountPoints returns the mount points (field 5) of a
// /proc/self/mountinfo text, with the kernel's octal escapes (\040 for a
// space, \011, \012, \134) decoded. Malformed lines are skipped.
func parseMountPoints(data string) []string {
	var out []string
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		out = append(out, unescapeMount(f[4]))
	}
	return out
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// mountsUnder returns the mount points at or below dir.
func mountsUnder(mountPoints []string, dir string) []string {
	dir = filepath.Clean(dir)
	var out []string
	for _, m := range mountPoints {
		if m == dir || strings.HasPrefix(m, dir+"/") || dir == "/" {
			out = append(out, m)
		}
	}
	return out
}
