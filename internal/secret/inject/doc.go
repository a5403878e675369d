// Package inject adds a tenant's secrets to the requests its sandboxes
// send to named hosts, in the egress proxy, so that the sandbox never
// holds them (docs/network.md, "Secrets").
//
// A sandbox whose policy has inject rules gets its own certificate
// authority (ECDSA P-256), made when its network is attached with them:
// the certificate is appended to the sandbox's CA bundle and announced
// through SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS (Hook);
// the private key stays in the server (memory, and the database sealed
// with the secrets key). For a connection to a host named by one of the
// sandbox's inject rules, the Interceptor terminates the sandbox's TLS
// with a certificate from that CA, connects upstream with normal
// verification, sets the rule's headers on each request and streams the
// rest. Connections to every other host are relayed untouched, their TLS
// never terminated.
//
// Admission checks at create and on policy changes that the secrets a
// spec names exist and that the tenant may use secrets.
package inject
