// Package egress is the egress proxy and DNS resolver that enforce each
// sandbox's network policy (docs/network.md).
//
// The kernel (package network) delivers every TCP connection a sandbox
// opens to the proxy — redirected ones (transparent: the original
// destination comes from the host's conntrack) and ones addressed to the
// proxy itself (explicit: HTTP_PROXY/HTTPS_PROXY, CONNECT and absolute-URI
// requests) — and every DNS query to the resolver. A sandbox is identified
// only by the source address of its traffic.
//
// Decisions: a destination is allowed by name (an allowlist entry; the
// proxy resolves the name itself and refuses answers in forbidden ranges,
// so DNS rebinding cannot point an allowed name at the host or the
// metadata service), by address (allow_cidr, or any public address in open
// mode), and the TLS server name or HTTP Host the client sends must match
// the destination it was allowed as. TLS is not terminated to look: the
// ClientHello is peeked. The resolver answers only allowed names; a query
// for any other name never leaves the host.
//
// Every decision is reported to a Sink (the audit log) and a Recorder
// (metrics). An Interceptor (secret injection) may ask to see inside
// allowed HTTP(S) connections; without one, bytes are relayed untouched.
package egress
