// Package netlab gives tests network namespaces of their own, held by a
// descriptor: the only places (with loopback) a test may send packets to.
// Addresses that must be refused (metadata, public ranges) are put on
// interfaces in such a namespace, so that nothing leaves the machine even
// if a policy under test is broken.
package netlab
