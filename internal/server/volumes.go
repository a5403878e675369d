package server

import (
	"path/filepath"

	"github.com/paddockhq/paddock/internal/volume"
)

// openVolumes opens the volume store under the data directory
// (docs/state.md, "Volumes"); where volumes cannot be kept (no
// mkfs.ext4, not Linux) it logs why and returns nil, and the volume
// calls answer unsupported.
func (s *Server) openVolumes() *volume.Store {
	st, err := volume.Open(volume.Options{Dir: filepath.Join(s.cfg.DataDir, "volumes"), Log: s.log})
	if err != nil {
		s.log.Warn("volumes are not available on this server", "err", err)
		return nil
	}
	return st
}
