// Package wire holds the JSON shapes of Paddock's REST API: what a client
// sends and what the server answers (sandboxes, specs and network
// policies, exec, files, processes and terminals, ports, keys, tenants and
// quotas, tokens, secrets, the audit log, errors, the browser).
//
// It is the one definition both sides use — the server's surfaces
// (internal/api, internal/e2b, internal/mcp), the sandbox manager's public
// API and the Go client (package client) — and it depends on nothing but
// the standard library, so a program that talks to Paddock imports no
// part of the server. Validation lives with the services that enforce it,
// not here. Field names and shapes are the API's: changing one is an API
// change (the OpenAPI document in internal/api/openapi describes them).
package wire
