package bench

import (
	"bufio"
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ListeningInodes returns the socket inodes of /proc/net/tcp (or tcp6)
// lines in state LISTEN (0A) on local port port. At most 64 are returned.
func ListeningInodes(table []byte, port uint16) []uint64 {
	var out []uint64
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	for sc.Scan() && len(out) < 64 {
		f := strings.Fields(sc.Text())
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || uint16(p) != port {
			continue
		}
		ino, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil || ino == 0 {
			continue
		}
		out = append(out, ino)
	}
	return out
}

// ServerPID finds the process on this host listening on rawURL's port, if
// the URL names a loopback address (a server elsewhere has no pid here).
// 0 when it cannot be found (not loopback, not root, gone).
func ServerPID(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	host, portStr := u.Hostname(), u.Port()
	if portStr == "" {
		portStr = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return 0
	}
	want := map[string]bool{}
	for _, t := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, ino := range ListeningInodes(b, uint16(port)) {
			want["socket:["+strconv.FormatUint(ino, 10)+"]"] = true
		}
	}
	if len(want) == 0 {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		fds, err := os.ReadDir(p + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(p + "/fd/" + fd.Name()); err == nil && want[l] {
				pid, _ := strconv.Atoi(filepath.Base(p))
				return pid
			}
		}
	}
	return 0
}
