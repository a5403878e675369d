// Package console serves Paddock's web console at /ui: a single-page app
// (built from web/console and embedded here) through which people watch,
// steer and audit sandboxes.
//
// The console holds no rights of its own. Sign-in exchanges an API key for
// a session (an HttpOnly, SameSite=Strict cookie, Secure over TLS); the key
// stays in the server's memory and never returns to the page. Every call
// the page makes goes to /ui/api/..., where the console checks the session
// and its CSRF token, then hands the request to the server's own REST API
// with the session's key as its bearer credential: what a person sees and
// may do is what the API allows that key, with the API's checks, audit
// records and errors. A session ends when it expires, when its person signs
// out, or at the first request or push after its key stops authenticating
// (revoked or expired).
//
// The sandbox list is pushed to the page (server-sent events): a watcher
// polls the manager's in-memory list for the tenants that have a console
// open and tells their feeds when something changed; each feed then
// fetches its list through the REST API and sends only the differences.
package console
