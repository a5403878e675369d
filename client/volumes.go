package client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/paddockhq/paddock/wire"
)

// Volume is one volume (docs/state.md, "Volumes").
type Volume = wire.Volume

// VolumeMount is one entry of a spec's volumes.
type VolumeMount = wire.VolumeMount

// CreateVolume makes volume name of sizeMB (0: the server's default).
func (c *Client) CreateVolume(ctx context.Context, name string, sizeMB int64) (Volume, error) {
	var v Volume
	err := c.call(ctx, http.MethodPost, "/v1/volumes", wire.CreateVolumeRequest{Name: name, SizeMB: sizeMB}, &v)
	return v, err
}

// Volumes lists the tenant's volumes by name.
func (c *Client) Volumes(ctx context.Context) ([]Volume, error) {
	var l wire.VolumeList
	err := c.call(ctx, http.MethodGet, "/v1/volumes", nil, &l)
	return l.Volumes, err
}

// Volume returns one volume: its size, use and the sandboxes mounting it.
func (c *Client) Volume(ctx context.Context, name string) (Volume, error) {
	var v Volume
	err := c.call(ctx, http.MethodGet, "/v1/volumes/"+url.PathEscape(name), nil, &v)
	return v, err
}

// DeleteVolume deletes a volume no sandbox mounts.
func (c *Client) DeleteVolume(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, "/v1/volumes/"+url.PathEscape(name), nil, nil)
}

func volumeFilesPath(name, sub string, q url.Values) string {
	p := "/v1/volumes/" + url.PathEscape(name) + "/files" + sub
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// VolumeReadFile returns a volume file's bytes, without a sandbox.
func (c *Client) VolumeReadFile(ctx context.Context, name, path string) ([]byte, error) {
	req, err := c.newRequest(ctx, http.MethodGet, volumeFilesPath(name, "", url.Values{"path": {path}}), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// VolumeWriteFile replaces a volume's file with data (parents are made).
func (c *Client) VolumeWriteFile(ctx context.Context, name string, r WriteRequest, data []byte) (FileInfo, error) {
	q := withUser(url.Values{"path": {r.Path}}, r.User)
	if r.Mode != "" {
		q.Set("mode", r.Mode)
	}
	var fi FileInfo
	err := c.upload(ctx, http.MethodPut, volumeFilesPath(name, "", q), bytes.NewReader(data), int64(len(data)), &fi)
	return fi, err
}

// VolumeListFiles lists a volume's directory (limit 0: the server's).
func (c *Client) VolumeListFiles(ctx context.Context, name, path string, limit int) (ListResult, error) {
	q := url.Values{"path": {path}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var res ListResult
	err := c.call(ctx, http.MethodGet, volumeFilesPath(name, "/list", q), nil, &res)
	return res, err
}

// VolumeStat describes a volume's path.
func (c *Client) VolumeStat(ctx context.Context, name, path string) (FileInfo, error) {
	var fi FileInfo
	err := c.call(ctx, http.MethodGet, volumeFilesPath(name, "/stat", url.Values{"path": {path}}), nil, &fi)
	return fi, err
}

// VolumeMkdir makes a directory in a volume.
func (c *Client) VolumeMkdir(ctx context.Context, name string, r MkdirRequest) (FileInfo, error) {
	var fi FileInfo
	err := c.call(ctx, http.MethodPost, volumeFilesPath(name, "/mkdir", nil), r, &fi)
	return fi, err
}

// VolumeRemove removes a volume's path (a directory's tree with
// recursive).
func (c *Client) VolumeRemove(ctx context.Context, name, path string, recursive bool) (RemoveResult, error) {
	q := url.Values{"path": {path}}
	if recursive {
		q.Set("recursive", "true")
	}
	var res RemoveResult
	err := c.call(ctx, http.MethodDelete, volumeFilesPath(name, "", q), nil, &res)
	return res, err
}
