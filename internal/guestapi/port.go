package guestapi

import (
	"context"
	"net"
)

// Exposed ports through the agent (the gVisor runtime: a sandbox's
// loopback lives in gVisor's netstack, which no host thread can join).
// RoutePortDial with "Connection: Upgrade" and "Upgrade: paddock-port/1":
// the agent connects to the port on the sandbox's loopback and, after the
// 101 answer, the connection is a plain stream to it. Nothing listening is
// CodeNotFound.
const (
	RoutePortDial = "/v1/ports/dial"
	PortProtocol  = "paddock-port/1"
)

// PortRequest names the port to reach.
type PortRequest struct {
	Port int `json:"port"`
}

// DialPort opens a TCP connection to port on the sandbox's loopback,
// relayed by the agent.
func (c *Client) DialPort(ctx context.Context, port int) (net.Conn, error) {
	conn, br, err := c.dialUpgrade(ctx, RoutePortDial, PortProtocol, PortRequest{Port: port})
	if err != nil {
		return nil, err
	}
	return &bufConn{Conn: conn, r: br}, nil
}
