package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/bench"
	"github.com/paddockhq/paddock/internal/network"
)

// serveNFTable is the nftables table serve's sandbox network installs
// (internal/network's default, which serve does not change).
const serveNFTable = "paddock"

// benchNetwork decides whether the embedded stack may run sandbox
// networking as serve does. The network installs serve's nftables table —
// replacing any other — and listens on serve's egress ports, so next to
// another Paddock with networking it would break that server's sandboxes:
// then networking is disabled for the bench, and the note says why.
// Otherwise the returned func removes the table the bench's stack made.
func benchNetwork(sf *serveFlags) (dropTable func(), note string) {
	busy := ""
	if c, err := nftables.New(); err == nil {
		if tables, err := c.ListTablesOfFamily(nftables.TableFamilyINet); err == nil {
			for _, t := range tables {
				if t.Name == serveNFTable {
					busy = fmt.Sprintf("the nftables table inet %s exists: a server's, or left by one — `nft delete table inet %s` if no server uses it", serveNFTable, serveNFTable)
				}
			}
		}
	}
	for _, port := range []uint16{sf.net.proxyPort, sf.net.dnsPort} {
		for _, t := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			if b, err := os.ReadFile(t); err == nil && len(bench.ListeningInodes(b, port)) > 0 && busy == "" {
				busy = fmt.Sprintf("TCP port %d is in use", port)
			}
		}
	}
	if ifs, err := net.Interfaces(); err == nil && busy == "" {
		for _, i := range ifs {
			if strings.HasPrefix(i.Name, network.DefaultIfPrefix) {
				busy = fmt.Sprintf("a sandbox interface (%s) exists", i.Name)
				break
			}
		}
	}
	if busy != "" {
		sf.net.disable = true
		return func() {}, "sandbox networking disabled for the embedded bench: another Paddock's network seems to be on this host (" +
			busy + "); measure the network scenarios against that server"
	}
	return func() {
		c, err := nftables.New()
		if err != nil {
			return
		}
		t := &nftables.Table{Family: nftables.TableFamilyINet, Name: serveNFTable}
		c.AddTable(t) // add-then-delete: no error if it is already gone
		c.DelTable(t)
		_ = c.Flush()
	}, ""
}

// removeBenchDir removes an embedded stack's data directory (detaching
// anything still mounted below it) and its cgroup prefix groups.
func removeBenchDir(dir, prefix string) {
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		var mounts []string
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
				mounts = append(mounts, f[4])
			}
		}
		for i := len(mounts) - 1; i >= 0; i-- {
			_ = unix.Unmount(mounts[i], unix.MNT_DETACH)
		}
	}
	_ = os.RemoveAll(dir)
	groups, _ := filepath.Glob("/sys/fs/cgroup/*/" + prefix)
	groups = append(groups, "/sys/fs/cgroup/"+prefix)
	for _, g := range groups {
		_ = os.Remove(g) // empty by now; a non-empty group stays (and is logged by the runtime)
	}
}
