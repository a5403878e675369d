package guestapi

import (
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Inside gVisor (internal/runtime/gvisor) the agent is started by runsc
// from an OCI spec, so neither channel of the native runtime exists: there
// is no inherited setup socketpair, and a listening socket created by the
// agent on a host directory cannot be checkpointed by gVisor. Instead:
//
//   - runsc bind-mounts two host directories read-only: GVisorBinDir (the
//     agent binary) and GVisorCtlDir (this sandbox's boot file and the
//     host's listening socket);
//   - the agent reads its GVisorBoot from GVisorBootFile (the host removes
//     the file once the agent is ready: it carries the sandbox's env);
//   - the agent dials GVisorSocket (runsc --host-uds=open) and keeps a few
//     idle connections there, each opened with a Hello carrying the boot's
//     token; the host serves HTTP/1.1 requests over them as a client, the
//     agent answers as the server: the same protocol as native, with only
//     the direction of the dial reversed.
//
// gVisor closes host-backed connections when it saves a checkpoint, so a
// restored agent dials afresh: the host's socket of the restored sandbox
// (or of each fork) is then the one it reaches.
const (
	GVisorDir      = "/dev/.paddock"
	GVisorBinDir   = GVisorDir + "/bin"
	GVisorCtlDir   = GVisorDir + "/ctl"
	GVisorBootFile = "boot.json" // in GVisorCtlDir
	GVisorSocket   = "guest.sock"
	// GVisorArg is the agent's first argument inside gVisor.
	GVisorArg = "gvisor"
)

// GVisorBoot is what the agent reads at start inside gVisor.
type GVisorBoot struct {
	Config Config `json:"config"`
	// Token proves to the host that a connection comes from the agent
	// (anything in the sandbox can dial a socket it can see).
	Token string `json:"token"`
	// Pids limits the processes of the sandbox's workloads (gVisor's own
	// pids controller: the host's counts only the sandbox's host threads).
	Pids int64 `json:"pids,omitempty"`
}

// maxBoot bounds the boot file (a CA bundle is its largest part).
const maxBoot = 16 << 20

// ReadGVisorBoot reads and checks a boot file.
func ReadGVisorBoot(path string) (*GVisorBoot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBoot+1))
	if err != nil {
		return nil, err
	}
	return ParseGVisorBoot(b)
}

// ParseGVisorBoot decodes a boot file and checks its version and token.
func ParseGVisorBoot(b []byte) (*GVisorBoot, error) {
	if len(b) > maxBoot {
		return nil, errors.New("boot file too large")
	}
	var boot GVisorBoot
	if err := json.Unmarshal(b, &boot); err != nil {
		return nil, fmt.Errorf("boot file: %w", err)
	}
	if boot.Config.Version != Version {
		return nil, fmt.Errorf("protocol version %d, want %d", boot.Config.Version, Version)
	}
	if !validToken(boot.Token) {
		return nil, errors.New("boot file: malformed token")
	}
	return &boot, nil
}

// TokenLen is the length of a token: 32 random bytes in hex.
const TokenLen = 64

func validToken(t string) bool {
	if len(t) != TokenLen {
		return false
	}
	_, err := hex.DecodeString(t)
	return err == nil
}

// helloPrefix starts every connection the agent dials; the token and a
// newline follow.
const helloPrefix = "PADDOCK-GUEST/1 "

// HelloLen is the exact length of a hello.
const HelloLen = len(helloPrefix) + TokenLen + 1

// Hello is what the agent writes first on each connection it dials.
func Hello(token string) []byte { return []byte(helloPrefix + token + "\n") }

// ErrBadHello is returned for a connection that did not open with the
// expected hello.
var ErrBadHello = errors.New("connection did not present the agent's token")

// CheckHello reads exactly one hello from r and compares its token with
// want in constant time. Nothing past the hello is consumed.
func CheckHello(r io.Reader, want string) error {
	if !validToken(want) {
		return errors.New("invalid expected token")
	}
	var buf [HelloLen]byte
	if _, err := io.ReadFull(r, buf[:]); err != nil {
		return fmt.Errorf("%w: %w", ErrBadHello, err)
	}
	return ParseHello(buf[:], want)
}

// ParseHello checks one complete hello against want.
func ParseHello(b []byte, want string) error {
	expect := Hello(want)
	if len(b) != len(expect) || subtle.ConstantTimeCompare(b, expect) != 1 {
		return ErrBadHello
	}
	return nil
}
