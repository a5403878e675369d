// Package network gives sandboxes their network (docs/network.md).
//
// A sandbox in mode "none" keeps only its loopback. Otherwise Attach puts
// a veth pair between the sandbox's network namespace and the host's
// (netlink, in-process: a handful of messages, no `ip` processes), with
// addresses from a pool (an IPv4 /30 and an IPv6 /64 per sandbox), and the
// egress proxy and resolver (package egress) learn the sandbox's address
// and policy.
//
// Enforcement is in the host's kernel, in one nftables table whose rules
// match every sandbox interface by name prefix, so attaching a sandbox
// changes no rule: all TCP from a sandbox is redirected to the proxy
// (which reads the original destination from conntrack), all DNS to the
// resolver, everything else is rejected (TCP reset, ICMP unreachable) and
// nothing is forwarded. Source addresses are checked against the
// interface they arrive on, so a sandbox cannot speak as another.
//
// Interfaces, addresses and the table survive a server restart; the
// attachments are recorded in the store (table network_attachments) and
// reloaded by New, and Sweep removes those of sandboxes that are gone.
package network
