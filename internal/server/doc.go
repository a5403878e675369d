// Package server is Paddock's composition root: the one place that builds
// the whole house — data directory and its lock, audit log and metrics,
// store, templates, cgroups, writable layers, sandbox network, secrets,
// native runtime, tenant quotas, manager, authenticator, browser service,
// and the surfaces in front (REST API, E2B-compatible API, MCP over HTTP)
// behind serve's HTTP hardening.
//
// paddock serve, paddock bench --embedded, paddock mcp --embedded and the
// integration tests (internal/testenv) all call Open, so what the tests
// exercise is what serve runs. Each optional part is a field of Config;
// Close releases everything, last opened first.
package server
