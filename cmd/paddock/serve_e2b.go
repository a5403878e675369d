package main

import (
	"log/slog"
	"net/http"

	"github.com/paddockhq/paddock/internal/e2b"
)

// withE2B adds the E2B-compatible API (internal/e2b) to serve's mounts:
// the control plane (/sandboxes, /v2/sandboxes...) and envd (/health,
// /files, /process.Process/*, /filesystem.Filesystem/*), authenticated by
// the same keys (X-API-KEY: e2b_...) and audited like REST.
func withE2B(mounts map[string]http.Handler, st *stack, log *slog.Logger) map[string]http.Handler {
	o := e2b.Options{Log: log, Manager: st.mgr, Auth: st.authn, Tokens: st.authn, Templates: st.tpls}
	if st.ob != nil && st.ob.Auditor != nil {
		o.Auditor = st.ob.Auditor // every request recorded, as for REST
	}
	srv, err := e2b.New(o)
	if err != nil {
		// A wiring bug; the rest of the server still works.
		log.Error("E2B-compatible API disabled", "err", err)
		return mounts
	}
	st.onClose(srv.Close)
	if mounts == nil {
		mounts = map[string]http.Handler{}
	}
	for pattern, h := range srv.Mounts() {
		if _, taken := mounts[pattern]; taken {
			log.Error("E2B-compatible API: a mount is taken; not serving it", "pattern", pattern)
			continue
		}
		mounts[pattern] = h
	}
	return mounts
}
