package server

import (
	"fmt"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/layers"
)

// TemplatesConfig configures image templates (docs/templates.md).
type TemplatesConfig struct {
	// StoreMax bounds the layer store's disk bytes
	// (--template-store-max); 0: unlimited.
	StoreMax int64
	// Insecure are registries ("host:port") reached over plain HTTP
	// (--insecure-registry).
	Insecure []string
	// AuthFile is a Docker config.json with registry credentials
	// (--registry-auth).
	AuthFile string
}

// openLayers opens DATA/layers and gives it to the template registry.
func (s *Server) openLayers() error {
	st, err := layers.Open(layers.Options{Dir: filepath.Join(s.cfg.DataDir, "layers"), MaxBytes: s.cfg.Templates.StoreMax, Log: s.log})
	if err != nil {
		return fmt.Errorf("template layer store: %w", err)
	}
	s.Layers = st
	s.Templates.UseLayerStore(st)
	return nil
}
