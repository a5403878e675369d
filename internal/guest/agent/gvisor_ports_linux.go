//go:build linux

package agent

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Exposed ports inside gVisor (guestapi.RoutePortDial): the host cannot
// join gVisor's netstack, so the agent connects to the sandbox's loopback
// and relays. Same semantics as native's host-side dial: 127.0.0.1, then
// ::1 if nothing listens there.

// maxPortTunnels bounds the relays open at once (each is two goroutines
// and two sockets in the agent).
const maxPortTunnels = 256

type portRelay struct{ slots chan struct{} }

func newPortRelay() *portRelay { return &portRelay{slots: make(chan struct{}, maxPortTunnels)} }

func (p *portRelay) register(m *rpc.Mux) { m.Handle(guestapi.RoutePortDial, p.handle) }

func (p *portRelay) handle(w http.ResponseWriter, r *http.Request) {
	if !rpc.Upgradable(r, guestapi.PortProtocol) {
		rpc.WriteError(w, errs.Invalid("a port needs Connection: Upgrade and Upgrade: %s", guestapi.PortProtocol))
		return
	}
	var req guestapi.PortRequest
	if err := guestapi.ReadHead(r.Body, guestapi.MaxHead, &req); err != nil {
		rpc.WriteError(w, err)
		return
	}
	if req.Port < 1 || req.Port > 65535 {
		rpc.WriteError(w, errs.Invalid("port must be between 1 and 65535"))
		return
	}
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		rpc.WriteError(w, errs.New(errs.CodeLimit, "%d port connections are open (the limit)", maxPortTunnels))
		return
	}
	port := strconv.Itoa(req.Port)
	up, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", port), 5*time.Second)
	if errors.Is(err, syscall.ECONNREFUSED) {
		if up6, err6 := net.DialTimeout("tcp6", net.JoinHostPort("::1", port), 5*time.Second); err6 == nil {
			up, err = up6, nil
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			rpc.WriteError(w, errs.New(errs.CodeNotFound, "nothing listens on port %d", req.Port))
			return
		}
		rpc.WriteError(w, errs.Wrap(errs.CodeUnavailable, err, "port %d does not answer", req.Port))
		return
	}
	defer up.Close()
	down, brw, err := rpc.Upgrade(w, guestapi.PortProtocol)
	if err != nil {
		rpc.WriteError(w, err)
		return
	}
	defer down.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	half := func(c net.Conn) {
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	go func() { defer wg.Done(); _, _ = io.Copy(up, brw.Reader); half(up) }()
	go func() { defer wg.Done(); _, _ = io.Copy(down, up); half(down) }()
	wg.Wait()
}
