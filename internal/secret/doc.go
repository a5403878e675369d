// Package secret holds the control plane's secrets and the rules that add
// them to a sandbox's outbound requests (docs/network.md, "Secrets").
//
// A secret belongs to a tenant and is referenced by name. Values are
// encrypted at rest with AES-256-GCM under a key kept in the data
// directory (secrets.key, mode 0600, generated on first start); each
// ciphertext is bound to its tenant and name, so rows cannot be swapped.
// Nothing here returns a value to a caller of the API: only the egress
// proxy's interceptor (package inject) reads them, to render the headers
// of requests it forwards.
//
// Rules (a sandbox spec's network.inject) say, for requests to a host,
// which header to set to a template such as "Bearer {secret:GITHUB_TOKEN}".
// NormalizeRules validates them; Template parses and renders the values.
package secret
