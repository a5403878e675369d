// Package sandbox is the sandbox manager: the one service layer that every
// surface (REST, CLI, MCP, the E2B adapter) calls. It owns the lifecycle
// (create, claim from the warm pool, timeouts, delete), persistence and
// reattachment across restarts, exec, and tenant scoping: a sandbox of
// another tenant is reported as not found, never as forbidden.
//
// Rights are checked here, not in the adapters: every method that acts for
// a caller takes its rights.Scope and refuses first, with errs.Forbidden,
// when the scope lacks the right the action needs (TestEveryMethodChecksRights
// holds every exported method to that). Caller is the same manager with the
// REST client's method signatures and wire types, the scope taken from the
// context, so the MCP tools run one code path in-process and over REST. The
// browser reaches the guest only through the primitives in browser.go
// (BrowserState, StartBrowser, DialBrowser, Act), which check and audit.
package sandbox
