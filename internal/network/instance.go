package network

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
)

// Instance identity: two servers on one host must not share a name, an
// address or a port. Without one, a second server's egress could not bind
// its fixed ports (its sandboxes silently got no network), both used the
// same nftables table and interface prefix, and each one's start-up sweep
// deleted the other's interfaces (issue 14 item 13). With Options.Instance
// set, a server's table, interface prefix, address pools and egress ports
// derive from it, its egress listens only on an address of its own pool,
// and its sweep touches only interfaces carrying its prefix.

// InstanceIDLen is the length of an instance id (hex digits).
const InstanceIDLen = 5

// InstanceID derives a server's network identity from its data directory
// (the composition root passes it as Options.Instance).
func InstanceID(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte("paddock-network-instance\x00" + filepath.Clean(dataDir)))
	return hex.EncodeToString(sum[:])[:InstanceIDLen]
}

func validInstance(id string) bool {
	if len(id) != InstanceIDLen {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// identity is what an instance's names, addresses and ports are.
type identity struct {
	ID                 string // "" for a server without an instance (the fixed names)
	PoolV4, PoolV6     string
	ProxyPort, DNSPort uint16
}

// instanceHash is a number drawn from the id.
func instanceHash(id string) uint64 {
	sum := sha256.Sum256([]byte("paddock-network-pools\x00" + id))
	return binary.BigEndian.Uint64(sum[:8])
}

// Names of an instance. "pk" cannot begin "pdk" (the prefix of a server
// without an instance), and every instance prefix has the same length, so
// no server's prefix is the start of another's: nftables' prefix matches
// and the sweep see only their own interfaces.
func instanceIfPrefix(id string) string { return "pk" + id }
func instanceTable(id string) string    { return "paddock-" + id }

// instancePorts are the egress ports of an instance: 15100-15899, the
// resolver's just above the proxy's.
func instancePorts(id string) (proxy, dns uint16) {
	p := uint16(15100 + 2*(instanceHash(id)%400))
	return p, p + 1
}

// instanceV6 is an RFC 4193 unique local /48 whose global id comes from
// the instance id (40 bits: two instances practically never share one).
func instanceV6(id string) string {
	h := instanceHash(id)
	var a [16]byte
	a[0] = 0xfd
	for i := 1; i <= 5; i++ {
		a[i] = byte(h >> (8 * (8 - i)))
	}
	return netip.PrefixFrom(netip.AddrFrom16(a), 48).String()
}

// v4Candidates are the /16s an instance may take, in the order it tries
// them: 10.128.0.0/9, starting where its id points.
func v4Candidates(id string) []netip.Prefix {
	start := instanceHash(id) % 128
	out := make([]netip.Prefix, 0, 128)
	for k := uint64(0); k < 128; k++ {
		out = append(out, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(128 + (start+k)%128), 0, 0}), 16))
	}
	return out
}

// idStore keeps an instance's identity in the network's tables, so that
// a restart finds the same pools (its sandboxes' addresses come from
// them).
type idStore struct{ db *sql.DB }

func (s idStore) get(ctx context.Context) (identity, bool, error) {
	var id identity
	var proxy, dns int
	err := s.db.QueryRowContext(ctx, `SELECT instance, pool_v4, pool_v6, proxy_port, dns_port FROM network_instance WHERE one=1`).
		Scan(&id.ID, &id.PoolV4, &id.PoolV6, &proxy, &dns)
	if errors.Is(err, sql.ErrNoRows) {
		return identity{}, false, nil
	}
	if err != nil {
		return identity{}, false, fmt.Errorf("network: load the instance: %w", err)
	}
	id.ProxyPort, id.DNSPort = uint16(proxy), uint16(dns)
	return id, true, nil
}

func (s idStore) put(ctx context.Context, id identity) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO network_instance (one, instance, pool_v4, pool_v6, proxy_port, dns_port)
		VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT(one) DO UPDATE SET instance=excluded.instance, pool_v4=excluded.pool_v4,
		pool_v6=excluded.pool_v6, proxy_port=excluded.proxy_port, dns_port=excluded.dns_port`,
		id.ID, id.PoolV4, id.PoolV6, int(id.ProxyPort), int(id.DNSPort))
	if err != nil {
		return fmt.Errorf("network: record the instance: %w", err)
	}
	return nil
}

// hostUse is what the host's namespace already uses: addresses and routes
// (other servers' interfaces among them), and the nftables tables of
// other instances.
type hostUse struct {
	prefixes []netip.Prefix
	tables   []string
}

func (u hostUse) overlaps(p netip.Prefix) bool {
	for _, q := range u.prefixes {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}

// claimedBy reports whether another instance's table claims pool p (an
// instance's table is named after it and records its pool in its name:
// see tableFor).
func (u hostUse) claimedBy(self string, p netip.Prefix) bool {
	for _, t := range u.tables {
		id, pool, ok := parseTableName(t)
		if ok && id != self && pool == p {
			return true
		}
	}
	return false
}

// tableFor names the table of instance id using pool v4: the pool is in
// the name so that another instance choosing its pool sees it is taken.
func tableFor(id string, v4 netip.Prefix) string {
	b := v4.Addr().As4()
	return fmt.Sprintf("%s-%d", instanceTable(id), b[1])
}

func parseTableName(name string) (id string, v4 netip.Prefix, ok bool) {
	rest, found := strings.CutPrefix(name, "paddock-")
	if !found || len(rest) < InstanceIDLen+2 || rest[InstanceIDLen] != '-' {
		return "", netip.Prefix{}, false
	}
	id = rest[:InstanceIDLen]
	second, err := strconv.Atoi(rest[InstanceIDLen+1:])
	if err != nil || second < 0 || second > 255 || !validInstance(id) {
		return "", netip.Prefix{}, false
	}
	return id, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(second), 0, 0}), 16), true
}

// chooseIdentity settles the identity of a server asked to be instance
// want: the recorded one while sandboxes are attached (their interfaces
// carry its names and addresses), the fixed names for a server that had
// sandboxes before instances existed, the recorded pool again unless
// another instance has claimed it meanwhile, and otherwise the first free
// pool from where the id points.
func chooseIdentity(want string, rec identity, recorded, attached bool, use hostUse) (identity, error) {
	switch {
	case recorded && attached:
		return rec, nil
	case attached:
		return identity{}, nil // upgraded with sandboxes attached: keep the fixed names
	}
	id := identity{ID: want, PoolV6: instanceV6(want)}
	id.ProxyPort, id.DNSPort = instancePorts(want)
	if recorded && rec.ID == want {
		if p, err := netip.ParsePrefix(rec.PoolV4); err == nil && !use.claimedBy(want, p) {
			id.PoolV4 = rec.PoolV4
			return id, nil
		}
	}
	for _, p := range v4Candidates(want) {
		if !use.overlaps(p) && !use.claimedBy(want, p) {
			id.PoolV4 = p.String()
			return id, nil
		}
	}
	return identity{}, errors.New("network: no free IPv4 pool in 10.128.0.0/9 for this instance: set one (--net-pool-v4)")
}
