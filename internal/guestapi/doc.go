// Package guestapi is the protocol between the Paddock server and the guest
// agent that runs as PID 1 inside each sandbox, and the host-side client for
// it.
//
// Two channels connect them. The setup channel is a SOCK_SEQPACKET
// socketpair inherited by the guest as fd 3: the host sends one Config, the
// guest answers with one Ready once its root filesystem and hardening are in
// place. The service channel is HTTP/1.1 on a Unix socket whose listening fd
// (fd 4) the host created inside a root-only directory; the host dials its
// path, and nothing inside the sandbox can reach it (the path is outside the
// sandbox's root and the fd is close-on-exec in the guest).
//
// Streams (exec output) use a small binary framing rather than JSON lines so
// that a gigabyte of output costs no encoding: each frame is one type byte,
// a 4-byte big-endian length, and the payload.
package guestapi
