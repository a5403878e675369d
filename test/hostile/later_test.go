//go:build linux

package hostile

// Cases still to come, with the capabilities they attack (their owners'
// issues); each will be one test here, in the same four steps, and a row
// in docs/security.md:
//
// Secret injection (issue 4, item 5) — group "network egress":
//   - the secret never enters the sandbox: not in its environment, files,
//     or any byte it can read from the proxy's answers (grep the sandbox's
//     whole filesystem and process memory for it);
//   - a secret bound to one destination is not sent to another (allowed)
//     name, nor over plain HTTP, nor after a redirect;
//   - a request that tries to read the injected header back (echo server)
//     sees it only upstream, never in the sandbox;
//   - the audit log records the injection without the value.
//
// Exposed ports (issue 4, item 6) — group "API and auth":
//   - a port exposed for sandbox A is not reachable as sandbox B, nor
//     without the port's credential, nor from another tenant;
//   - an exposed port does not expose the host (only the sandbox's own
//     listener), and closing it closes open connections;
//   - a tenant with deny_exposed_ports cannot open one.
//
// Browser (headless Chromium in a sandbox) — group "filesystem escape" and
// "network egress":
//   - file:// and chrome:// pages cannot reach host files or the
//     DevTools endpoint of another sandbox;
//   - the browser's traffic goes through the same egress policy (metadata,
//     private ranges, rebinding);
//   - a page cannot drive the API (cross-site requests, WebSocket
//     hijacking) of the server that runs it.
