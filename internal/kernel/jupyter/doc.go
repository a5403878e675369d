// Package jupyter is a small Jupyter client: connection files, message
// signing and verification (HMAC-SHA256), and the shell, control and IOPub
// channels of the messaging protocol v5.3 over ZeroMQ (the pure-Go
// github.com/go-zeromq/zmq4, so that CGO_ENABLED=0 builds keep working).
//
// It knows nothing of processes: package kernel starts the kernel and
// uses a Client to talk to it. Everything a kernel sends is treated as
// hostile (it runs the sandbox user's code): frames are size-limited before
// they are allocated, messages with a bad signature are dropped, and JSON
// is validated before anyone reads it.
package jupyter
