package mcp_test

import (
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/browser"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// One backend per surface, two things satisfy it: the REST client and
// the service of this process. A method that drifts on either side fails
// the build here.
var (
	_ mcp.Backend = (*client.Client)(nil)
	_ mcp.Backend = mcp.Local((*sandbox.Manager)(nil).Caller(), nil)
	_ mcp.Browser = (*client.Client)(nil)
	_ mcp.Browser = (*browser.Caller)(nil)
)
