package main

import (
	"log/slog"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
)

// gvisorStatus says at start whether this server can run gVisor sandboxes
// (docs/gvisor.md) and with which runsc; --runsc overrides where
// scripts/deps.sh builds it. The manager does not offer the gVisor
// runtime yet (issue 18, phase 2); the check is here so that an operator
// sees a missing or wrong runsc at once.
func gvisorStatus(log *slog.Logger, runsc string) {
	path, err := gvisor.FindRunsc(runsc)
	if err != nil {
		log.Info("gVisor sandboxes unavailable", "reason", errs.Public(err))
		return
	}
	log.Info("gVisor available", "runsc", path, "version", gvisor.RunscVersion)
}
