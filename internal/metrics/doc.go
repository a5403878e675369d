// Package metrics is Paddock's Prometheus instrumentation: sandboxes by
// state, create and exec latency, exec outcomes, egress decisions, errors
// by code, HTTP requests by route, and the audit log's write latency.
//
// A Metrics value owns its own registry (never the global default one);
// the composition root creates it and hands it to the parts that report:
// the sandbox manager (as a sandbox.Observer), the API (Middleware), the
// audit log (audit.Stats) and the egress proxy (EgressDecision). Handler
// serves the exposition. See docs/observability.md.
//
// Until go.sum carries client_golang's dependencies, the Prometheus-backed
// implementation builds only with the paddock_prom tag; without it a
// no-op stand-in with the same API is built (noprom.go) and /metrics
// answers 501. See noprom.go for how to drop the tag.
package metrics
