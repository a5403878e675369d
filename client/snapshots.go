package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/paddockhq/paddock/wire"
)

// Snapshot is one filesystem snapshot (docs/state.md).
type Snapshot = wire.Snapshot

// CreateSnapshot captures sandbox id's files as snapshot name (the sandbox
// is frozen for the copy and thawed after).
func (c *Client) CreateSnapshot(ctx context.Context, id, name string) (Snapshot, error) {
	var s Snapshot
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/snapshots", wire.CreateSnapshotRequest{Name: name}, &s)
	return s, err
}

// Snapshots lists the tenant's snapshots by name.
func (c *Client) Snapshots(ctx context.Context) ([]Snapshot, error) {
	var l wire.SnapshotList
	err := c.call(ctx, http.MethodGet, "/v1/snapshots", nil, &l)
	return l.Snapshots, err
}

// Snapshot returns one snapshot.
func (c *Client) Snapshot(ctx context.Context, name string) (Snapshot, error) {
	var s Snapshot
	err := c.call(ctx, http.MethodGet, "/v1/snapshots/"+url.PathEscape(name), nil, &s)
	return s, err
}

// DeleteSnapshot deletes a snapshot (sandboxes made from it keep their
// files).
func (c *Client) DeleteSnapshot(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, "/v1/snapshots/"+url.PathEscape(name), nil, nil)
}

// Fork makes count sandboxes (1 … wire.MaxForks) from one capture of
// sandbox id; all or nothing.
func (c *Client) Fork(ctx context.Context, id string, count int) ([]Sandbox, error) {
	var r wire.ForkResponse
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/fork", wire.ForkRequest{Count: count}, &r)
	return r.Sandboxes, err
}
