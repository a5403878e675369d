// Package mcp serves Paddock to AI agents over the Model Context Protocol,
// built on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// The tools (sandbox_create, exec, file_read, process_start, port_url...)
// are thin adapters over a Backend, whose methods have the REST client's
// signatures and wire types: the sandbox manager's Caller in-process
// (Local; the /mcp endpoint of `paddock serve`, and `paddock mcp
// --embedded`), or *client.Client itself (`paddock mcp`). The browser
// tools likewise take a Browser: browser.Service's Caller or the client.
// Either way the same keys, tenants, rights and audit trail apply as for
// REST: the manager checks the caller's rights, and every tool declares
// the right it needs (Server.Tools) so the tests can prove each is
// refused without it.
//
// Two transports: streamable HTTP (Server.Handler: bearer auth with the
// server's Authenticator, an Origin check, sessions bound to the key that
// opened them, an idle timeout) and stdio (Server.ServeStdio).
//
// A tool call that names no sandbox uses the MCP session's own sandbox: it
// is created on first use from the tenant's and server's defaults, renewed
// while the session uses it, and deleted when the session ends — so "give
// my agent a computer" needs no ids. Failures are tool results with
// isError set, worded so that a model can recover; never protocol errors.
package mcp
