package process

import "bytes"

// passwdShell returns the shell field of name's entry in an /etc/passwd
// image ("name:pw:uid:gid:gecos:home:shell"), or "" when there is none.
// Malformed lines are skipped: the file is the sandbox's, so anything
// inside may have written it.
func passwdShell(b []byte, name string) string {
	if name == "" {
		return ""
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		f := bytes.Split(line, []byte(":"))
		if len(f) != 7 || string(f[0]) != name {
			continue
		}
		sh := string(bytes.TrimRight(f[6], "\r"))
		if bytes.IndexByte(f[6], 0) >= 0 {
			return ""
		}
		return sh
	}
	return ""
}
