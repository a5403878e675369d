package disk

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// mountEntry is one line of /proc/<pid>/mountinfo (proc(5)).
type mountEntry struct {
	ID, Parent int
	Dev        string // "major:minor"
	Root       string // root of the mount within its filesystem
	MountPoint string
	MountOpts  string
	FSType     string
	Source     string
	SuperOpts  string
}

// maxMountinfo bounds how much of mountinfo is parsed.
const maxMountinfo = 64 << 20

// parseMountinfo parses the text of a mountinfo file. Lines look like
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// with a variable number of optional fields before the "-" separator and
// octal escapes (\040 for a space) in the path fields.
func parseMountinfo(data []byte) ([]mountEntry, error) {
	if len(data) > maxMountinfo {
		return nil, fmt.Errorf("mountinfo larger than %d bytes", maxMountinfo)
	}
	var out []mountEntry
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := parseMountinfoLine(line)
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", n, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func parseMountinfoLine(line []byte) (mountEntry, error) {
	f := bytes.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if string(f[i]) == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || len(f) < sep+3 {
		return mountEntry{}, errors.New("malformed line")
	}
	id, err1 := strconv.Atoi(string(f[0]))
	parent, err2 := strconv.Atoi(string(f[1]))
	if err1 != nil || err2 != nil || id < 0 || parent < 0 {
		return mountEntry{}, errors.New("malformed mount id")
	}
	e := mountEntry{
		ID:         id,
		Parent:     parent,
		Dev:        string(f[2]),
		Root:       unescapeMount(f[3]),
		MountPoint: unescapeMount(f[4]),
		MountOpts:  string(f[5]),
		FSType:     string(f[sep+1]),
		Source:     unescapeMount(f[sep+2]),
	}
	if len(f) > sep+3 {
		e.SuperOpts = string(f[sep+3])
	}
	return e, nil
}

// unescapeMount undoes the kernel's octal escaping of ' ', '\t', '\n' and
// '\\' (show_mountinfo → seq_path with " \t\n\\").
func unescapeMount(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+3 < len(b) && b[i+1] >= '0' && b[i+1] <= '3' && isOctal(b[i+2]) && isOctal(b[i+3]) {
			v := (b[i+1]-'0')<<6 | (b[i+2]-'0')<<3 | (b[i+3] - '0')
			out = append(out, v)
			i += 3
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// hasOpt reports whether the comma-separated option list opts holds opt.
func hasOpt(opts, opt string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// topMount returns the last (visible, topmost) mount at path, if any.
func topMount(ms []mountEntry, path string) (mountEntry, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].MountPoint == path {
			return ms[i], true
		}
	}
	return mountEntry{}, false
}
