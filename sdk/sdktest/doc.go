// Package sdktest runs the Python and TypeScript SDK suites (pytest with
// Debian's python3, node --test with the pinned npm packages) against a real
// `paddock serve` that the test builds and starts the way a user does: a
// temporary data directory, a free loopback port, PADDOCK_ADMIN_KEY.
package sdktest
