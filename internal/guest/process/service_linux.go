//go:build linux

package process

import (
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// Service is the process service of one sandbox: execs, background
// processes and terminals, all spawned by its Table.
type Service struct {
	table     *Table
	cfg       Config
	execSlots rpc.Slots
	reg       *registry
}

// Config is what the service needs of the agent.
type Config struct {
	Hostname string
	Shell    string // the default shell (SHELL, and a terminal's fallback)
	// SandboxEnv is the sandbox-wide environment as it is now (network
	// changes replace it), under each process's own.
	SandboxEnv func() map[string]string
	// OOMKills counts the sandbox's OOM kills (-1: unknown; nil: unknown).
	OOMKills func() int64
	Logf     func(format string, args ...any) // nil: no log
}

// NewService returns the service over t.
func NewService(t *Table, c Config) *Service {
	if c.Shell == "" {
		c.Shell = "/bin/sh"
	}
	s := &Service{table: t, cfg: c, execSlots: rpc.NewSlots(256)}
	s.reg = &registry{s: s, readers: rpc.NewSlots(guestapi.MaxProcessReaders)}
	return s
}

// Spawn starts a process (see Table.Spawn).
func (s *Service) Spawn(sp Spec) (*Proc, error) { return s.table.Spawn(sp) }

// Register serves exec and the process routes on m.
func (s *Service) Register(m *rpc.Mux) {
	g := s.reg
	m.Handle(guestapi.RouteExec, rpc.Streamed(maxExecHead, s.exec))
	m.Handle(guestapi.RouteProcStart, rpc.Unary(maxStartHead, g.handleStart))
	m.Handle(guestapi.RouteProcList, rpc.Unary(guestapi.MaxHead, g.handleList))
	m.Handle(guestapi.RouteProcGet, rpc.Unary(guestapi.MaxHead, g.handleGet))
	m.Handle(guestapi.RouteProcKill, rpc.Unary(guestapi.MaxHead, g.handleKill))
	m.Handle(guestapi.RouteProcOutput, rpc.Streamed(guestapi.MaxHead, g.handleOutput))
	m.Handle(guestapi.RouteProcAttach, g.handleAttach)
	m.Handle(guestapi.RouteProcStdin, rpc.Unary(guestapi.MaxHead, g.handleStdin))
	m.Handle(guestapi.RouteProcCloseStdin, rpc.Unary(guestapi.MaxHead, g.handleCloseStdin))
	m.Handle(guestapi.RouteProcSignal, rpc.Unary(guestapi.MaxHead, g.handleSignal))
	m.Handle(guestapi.RouteProcResize, rpc.Unary(guestapi.MaxHead, g.handleResize))
	m.Handle(guestapi.RouteProcWait, rpc.Unary(guestapi.MaxHead, g.handleWait))
	m.Handle(guestapi.RouteProcDeadline, rpc.Unary(guestapi.MaxHead, g.handleDeadline))
}

func (s *Service) sandboxEnv() map[string]string {
	if s.cfg.SandboxEnv == nil {
		return nil
	}
	return s.cfg.SandboxEnv()
}

// Logf writes to the agent's log.
func (s *Service) Logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// OOMKills counts the sandbox's OOM kills so far (-1: unknown).
func (s *Service) OOMKills() int64 {
	if s.cfg.OOMKills == nil {
		return -1
	}
	return s.cfg.OOMKills()
}
