package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/paddockhq/paddock/wire"
)

// ForkMemory makes count sandboxes from one checkpoint of running gVisor
// sandbox id: each continues its processes (memory included) on its own;
// all or nothing. A native sandbox is refused (unsupported).
func (c *Client) ForkMemory(ctx context.Context, id string, count int) ([]Sandbox, error) {
	var r wire.ForkResponse
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/fork", wire.ForkRequest{Count: count, Memory: true}, &r)
	return r.Sandboxes, err
}

// CreateMemorySnapshot snapshots gVisor sandbox id's files and its
// processes' memory as snapshot name; a create from it continues them.
func (c *Client) CreateMemorySnapshot(ctx context.Context, id, name string) (Snapshot, error) {
	var s Snapshot
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/snapshots", wire.CreateSnapshotRequest{Name: name, Memory: true}, &s)
	return s, err
}

// CreateSnapshotWith is CreateSnapshot, or CreateMemorySnapshot with
// memory (the MCP server's backend interface).
func (c *Client) CreateSnapshotWith(ctx context.Context, id, name string, memory bool) (Snapshot, error) {
	var s Snapshot
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/snapshots", wire.CreateSnapshotRequest{Name: name, Memory: memory}, &s)
	return s, err
}

// ForkWith is Fork, or ForkMemory with memory.
func (c *Client) ForkWith(ctx context.Context, id string, count int, memory bool) ([]Sandbox, error) {
	var r wire.ForkResponse
	err := c.call(ctx, http.MethodPost, "/v1/sandboxes/"+url.PathEscape(id)+"/fork", wire.ForkRequest{Count: count, Memory: memory}, &r)
	return r.Sandboxes, err
}
