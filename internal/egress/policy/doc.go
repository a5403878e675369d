// Package policy is the pure part of egress policy: parsing and matching
// allowlist patterns ("example.com", "*.example.com", with an optional
// ":port"), CIDRs for IP destinations, and the Guard that classifies
// addresses a sandbox must never reach (loopback, private, link-local,
// CGNAT, cloud metadata, the host's own addresses...).
//
// It has no I/O so that the sandbox manager can validate specs with the
// same code the proxy matches with, and so that every parser can be fuzzed.
package policy
