// Package sandbox is the sandbox manager: the one service layer that every
// surface (REST, CLI, MCP, the E2B adapter) calls. It owns the lifecycle
// (create, claim from the warm pool, timeouts, delete), persistence and
// reattachment across restarts, exec, and tenant scoping: a sandbox of
// another tenant is reported as not found, never as forbidden.
package sandbox
