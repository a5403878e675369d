// Package browser runs a headless Chromium inside each sandbox that wants
// one and drives it for agents and for the people watching them
// (docs/browser.md).
//
// The browser is a workload like any other: the guest agent starts
// Debian's chromium on its hardened spawner, inside the sandbox's
// namespaces, cgroups, seccomp filter and Landlock rules, so its traffic
// obeys the sandbox's egress policy, its memory counts against the
// sandbox's limit and its profile and downloads are the sandbox's files.
// A crash restarts it; it dies with the sandbox.
//
// The server reaches the browser's DevTools (on the sandbox's loopback)
// through connections the guest relays. Over them:
//
//   - Service: the high-level actions (navigate, click, type, press,
//     scroll, text and Markdown, an accessibility snapshot with element
//     references, JavaScript, screenshots, tabs), with chromedp as the
//     client, behind the REST API, the CLI and the MCP tools. Its Caller
//     view has the client's method signatures, so the MCP tools run the
//     same code in-process and over REST;
//   - Relay: the DevTools protocol itself, for Playwright's
//     connectOverCDP and Puppeteer's connect (served by internal/api);
//   - View: the screencast behind the page that shows the browser's
//     screen as it changes (served by internal/api).
//
// Every entry point takes the caller's rights.Scope and the right its
// action needs; the sandbox manager checks both before the browser is
// touched, and records the audited actions. The HTTP side (bearer auth,
// origins, the route table) belongs to internal/gate and internal/api.
//
// Everything that comes out of the sandbox — DevTools messages, page
// text, the accessibility tree — is untrusted input here: it is bounded
// in size and never interpreted beyond decoding.
package browser
