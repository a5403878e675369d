package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/client"
)

// capabilities are what the server under test serves, read from its
// published OpenAPI document (which a test keeps identical to its routes)
// and by probing the endpoints that document does not cover (/mcp).
type capabilities struct {
	paths []string
	err   error // the document could not be read
	mcp   error // nil: /mcp is served
}

func probeCapabilities(ctx context.Context, c *client.Client) *capabilities {
	caps := &capabilities{}
	caps.paths, caps.err = openAPIPaths(ctx, c)
	caps.mcp = probeMCP(ctx, c)
	return caps
}

// has reports whether some route's path contains part.
func (c *capabilities) has(part string) bool {
	for _, p := range c.paths {
		if strings.Contains(p, part) {
			return true
		}
	}
	return false
}

// lacks is the reason a capability is unavailable, "" if it is served.
func (c *capabilities) lacks(part, what string) string {
	if c.err != nil {
		return fmt.Sprintf("cannot tell whether the server has %s: %v", what, c.err)
	}
	if !c.has(part) {
		return fmt.Sprintf("%s is not served by this server (no %s route in its /openapi.json)", what, part)
	}
	return ""
}

func openAPIPaths(ctx context.Context, c *client.Client) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL()+"/openapi.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseOpenAPIPaths(io.LimitReader(resp.Body, 16<<20))
}

// parseOpenAPIPaths returns the keys of an OpenAPI document's "paths".
func parseOpenAPIPaths(r io.Reader) ([]string, error) {
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("malformed /openapi.json: %w", err)
	}
	return sortedKeys(doc.Paths), nil
}

// probeMCP tells whether /mcp exists: an unknown path answers 404 with
// the API's error shape; the MCP handler answers a bare GET otherwise.
func probeMCP(ctx context.Context, c *client.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL()+"/mcp", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		if ce.Status == http.StatusNotFound {
			return errors.New("MCP is not served by this server (/mcp answers 404)")
		}
		return nil // 400/405/406: the handler is there and wants a session
	}
	return err
}

// healthVersion is the version the server's /healthz reports.
func healthVersion(ctx context.Context, c *client.Client) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL()+"/healthz", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var h struct {
		OK      bool   `json:"ok"`
		Version string `json:"version"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&h); err != nil {
		return "", err
	}
	if !h.OK {
		return h.Version, errors.New("the server reports it is not healthy")
	}
	return h.Version, nil
}
