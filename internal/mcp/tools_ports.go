package mcp

import (
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

type portIn struct {
	sandboxIn
	Port int `json:"port" jsonschema:"TCP port a server inside the sandbox listens on (1-65535)."`
}

type portOut struct {
	sandboxOut
	Port int    `json:"port"`
	URL  string `json:"url" jsonschema:"URL at which the Paddock server forwards HTTP to that port. It carries a token that reaches that port alone, for an hour: open it as it is, no key needed."`
}

func portTools(tb *Toolbox) {
	Add(tb, Tool{Name: "port_url", Need: rights.Of(rights.Exec), Title: "URL of a sandbox port", ReadOnly: true,
		Description: "Get the URL at which the Paddock server exposes a TCP port of a sandbox (for a web app or API " +
			"started with process_start), to give to the user or to a browser. From inside the sandbox use " +
			"http://127.0.0.1:PORT/ instead."},
		func(c *Call, in portIn) (portOut, error) {
			if err := validPort(in.Port); err != nil {
				return portOut{}, newToolError(errs.CodeInvalid, "`port` must be a TCP port number between 1 and 65535.")
			}
			return onSandbox(c, in.sandboxIn, func(id string, out *portOut) error {
				*out = portOut{Port: in.Port}
				var err error
				var u wire.PortURL
				u, err = c.Backend().PortURL(c.Context(), id, in.Port, 0)
				out.URL = u.URL
				return err
			})
		})
}
