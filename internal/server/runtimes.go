package server

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// defaultRuntime makes --default-runtime the runtime of specs that name
// none. A default this server cannot run refuses the start: every
// sandbox asked for without a runtime would fail otherwise.
func (s *Server) defaultRuntime(l *sandbox.Limits) error {
	rt := s.cfg.DefaultRuntime
	if rt == "" || rt == wire.RuntimeNative {
		return nil
	}
	b, ok := s.runtimes()[rt]
	if !ok {
		return fmt.Errorf("--default-runtime %s: this server has no %s runtime", rt, rt)
	}
	if r, ok := b.(interface{ Refused() error }); ok {
		if err := r.Refused(); err != nil {
			return fmt.Errorf("--default-runtime %s: %s", rt, errs.Public(err))
		}
	}
	l.Default.Runtime = rt
	return nil
}

// poolSize is --pool, or none when the default runtime is not native: warm
// sandboxes are native, and no spec that names no runtime could use one.
func (s *Server) poolSize(l sandbox.Limits) int {
	if rt := l.Default.Runtime; rt != "" && rt != wire.RuntimeNative && s.cfg.PoolSize > 0 {
		s.log.Info("no warm pool: the default runtime is "+rt+" and warm sandboxes are native", "pool", s.cfg.PoolSize)
		return 0
	}
	return s.cfg.PoolSize
}
