package mcp

import "github.com/paddockhq/paddock/internal/errs"

type portIn struct {
	Sandbox string `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	Port    int    `json:"port" jsonschema:"TCP port a server inside the sandbox listens on (1-65535)."`
}

type portOut struct {
	Sandbox string `json:"sandbox"`
	Port    int    `json:"port"`
	URL     string `json:"url" jsonschema:"URL at which the Paddock server forwards HTTP to that port (it needs the same API key)."`
}

func portTools(tb *Toolbox) {
	Add(tb, Tool{Name: "port_url", Title: "URL of a sandbox port", ReadOnly: true,
		Description: "Get the URL at which the Paddock server exposes a TCP port of a sandbox (for a web app or API " +
			"started with process_start), to give to the user or to a browser. From inside the sandbox use " +
			"http://127.0.0.1:PORT/ instead."},
		func(c *Call, in portIn) (portOut, error) {
			if err := validPort(in.Port); err != nil {
				return portOut{}, newToolError(errs.CodeInvalid, "`port` must be a TCP port number between 1 and 65535.")
			}
			out := portOut{Port: in.Port}
			id, err := c.On(in.Sandbox, func(id string) error {
				var err error
				out.URL, err = c.Backend().PortURL(c.Context(), id, in.Port)
				return err
			})
			out.Sandbox = id
			return out, err
		})
}
