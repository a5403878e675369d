package main

import (
	"log/slog"
	"net/http"

	"github.com/paddockhq/paddock/internal/console"
)

// withConsole adds the web console (internal/console) at /ui to serve's
// mounts. It signs people in with the same keys, acts through the REST
// API as their key, and records sign-ins like API requests.
func withConsole(mounts map[string]http.Handler, f *serveFlags, st *stack, log *slog.Logger) map[string]http.Handler {
	o := console.Options{Auth: st.authn, Sandboxes: st.mgr, AllowInsecure: f.insecureListen, Log: log}
	if st.ob != nil {
		o.Auditor = st.ob.Auditor
		if st.ob.audit != nil {
			o.Verifier = console.AuditVerifier(st.ob.audit.Dir(), st.ob.audit.PublicKey())
		}
	}
	c := console.New(o)
	st.onClose(c.Close)
	if mounts == nil {
		mounts = map[string]http.Handler{}
	}
	mounts[console.Prefix] = c.Handler()
	mounts[console.Prefix+"/"] = c.Handler()
	return mounts
}
