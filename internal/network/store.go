package network

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// Migrations create the network's own table; the composition root passes
// them to store.Open.
var Migrations = []store.Migration{{Name: "network-1", SQL: `CREATE TABLE network_attachments (
		sandbox    TEXT PRIMARY KEY,
		slot       INTEGER NOT NULL UNIQUE,
		ifname     TEXT NOT NULL,
		pid        INTEGER NOT NULL,
		addrs      TEXT NOT NULL,
		policy     TEXT NOT NULL,
		created_at INTEGER NOT NULL
	)`}, {Name: "network-2", SQL: `CREATE TABLE network_instance (
		one        INTEGER PRIMARY KEY CHECK (one = 1),
		instance   TEXT NOT NULL,
		pool_v4    TEXT NOT NULL,
		pool_v6    TEXT NOT NULL,
		proxy_port INTEGER NOT NULL,
		dns_port   INTEGER NOT NULL
	)`}}

// record is one attachment as stored.
type record struct {
	Sandbox string
	Slot    int
	IfName  string
	Pid     int
	Addrs   []netip.Addr // the sandbox side's (its identity at the proxy)
	Policy  runtime.NetPolicy
}

type attachStore struct{ db *sql.DB }

func (s attachStore) put(ctx context.Context, r record) error {
	addrs, _ := json.Marshal(r.Addrs)
	pol, _ := json.Marshal(r.Policy)
	_, err := s.db.ExecContext(ctx, `INSERT INTO network_attachments (sandbox, slot, ifname, pid, addrs, policy, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(sandbox) DO UPDATE SET slot=excluded.slot, ifname=excluded.ifname, pid=excluded.pid,
			addrs=excluded.addrs, policy=excluded.policy`,
		r.Sandbox, r.Slot, r.IfName, r.Pid, string(addrs), string(pol), time.Now().Unix())
	if err != nil {
		return fmt.Errorf("network: record attachment: %w", err)
	}
	return nil
}

func (s attachStore) setPolicy(ctx context.Context, id string, p runtime.NetPolicy) error {
	pol, _ := json.Marshal(p)
	if _, err := s.db.ExecContext(ctx, `UPDATE network_attachments SET policy=? WHERE sandbox=?`, string(pol), id); err != nil {
		return fmt.Errorf("network: record policy: %w", err)
	}
	return nil
}

func (s attachStore) delete(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM network_attachments WHERE sandbox=?`, id); err != nil {
		return fmt.Errorf("network: forget attachment: %w", err)
	}
	return nil
}

func (s attachStore) list(ctx context.Context) ([]record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sandbox, slot, ifname, pid, addrs, policy FROM network_attachments`)
	if err != nil {
		return nil, fmt.Errorf("network: load attachments: %w", err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		var addrs, pol string
		if err := rows.Scan(&r.Sandbox, &r.Slot, &r.IfName, &r.Pid, &addrs, &pol); err != nil {
			return nil, fmt.Errorf("network: load attachments: %w", err)
		}
		_ = json.Unmarshal([]byte(addrs), &r.Addrs)
		_ = json.Unmarshal([]byte(pol), &r.Policy)
		out = append(out, r)
	}
	return out, rows.Err()
}

// StoreTenants tells the egress proxy each sandbox's tenant from the
// store's sandboxes table (egress.Options.TenantOf), so that its
// per-tenant limits count a tenant's sandboxes together.
func StoreTenants(db *store.DB) func(ctx context.Context, sandbox string) (string, error) {
	return func(ctx context.Context, id string) (string, error) {
		sb, err := db.GetSandbox(ctx, id)
		if err != nil {
			return "", err
		}
		return sb.Tenant, nil
	}
}
