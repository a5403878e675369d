package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/mcp"
)

// mcpMounts is serve's MCP endpoint: /mcp (streamable HTTP) over the
// manager, authenticated by the same keys as REST. When ctx ends (server
// shutdown) every MCP session is closed and its sandbox deleted.
func mcpMounts(ctx context.Context, f *serveFlags, st *stack, log *slog.Logger) map[string]http.Handler {
	// MCP sessions live in memory: after a restart every session sandbox
	// from before is an orphan.
	if n := st.mgr.DeleteLabeled(ctx, mcp.SessionLabel); n > 0 {
		log.Info("deleted MCP session sandboxes left by the previous server", "count", n)
	}
	// The tools act on the manager as each request's caller; port links
	// are the REST API's own (the same ports domain, the same tokens).
	b := mcp.Local(st.mgr.Caller(), api.NewPortLinks(st.mgr, st.authn, f.sec.portsDomain))
	o := mcp.Options{Log: log, Version: version, AllowedOrigins: f.http.allowedOrigins,
		HostChecked: true} // the hardening middleware checks Host
	o.Browser = mcpBrowser(st) // serve_browser.go
	if st.ob != nil && st.ob.Auditor != nil {
		o.Auditor = st.ob.Auditor // every request recorded, as for REST
	}
	srv, err := mcp.New(b, o)
	if err != nil {
		// A tool that cannot be registered is a bug; the rest of the
		// server still works, and /mcp says why it does not.
		log.Error("MCP endpoint disabled", "err", err)
		return map[string]http.Handler{"/mcp": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"the MCP endpoint failed to start; see the server log"}}` + "\n"))
		})}
	}
	closeAll := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Close(cctx); err != nil {
			log.Warn("MCP sessions did not all close; their sandboxes expire on their own", "err", err)
		}
	}
	// At shutdown the sessions close at once (their event streams would
	// hold up the HTTP server's graceful shutdown), and before the runtime
	// closes, their sandboxes are gone.
	stop := context.AfterFunc(ctx, closeAll)
	st.onClose(func() { stop(); closeAll() })
	return map[string]http.Handler{"/mcp": srv.Handler(st.authn)}
}
