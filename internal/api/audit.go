package api

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// maxAuditWait bounds a long-poll of GET /v1/audit.
const maxAuditWait = 60 * time.Second

func (s *Server) auditRoutes() {
	s.authed("GET /v1/audit", rights.Audit, s.auditQuery)
	s.authed("GET /v1/audit/export", rights.Audit, s.auditExport)
	// Metrics need the admin key too: their labels describe what the
	// server is doing (routes, error rates, egress denials). A scraper
	// that cannot hold a key uses `paddock serve --metrics-listen` on
	// loopback instead.
	s.authed("GET /metrics", rights.Audit, s.metrics)
}

// auditQueryOf reads the filters shared by both routes.
func auditQueryOf(r *http.Request) (audit.Query, error) {
	v := r.URL.Query()
	q := audit.Query{Sandbox: v.Get("sandbox"), Actor: v.Get("actor"), Tenant: v.Get("tenant"), Action: v.Get("action")}
	for _, f := range []string{q.Sandbox, q.Actor, q.Tenant, q.Action} {
		if len(f) > 256 {
			return q, errs.Invalid("filter values are at most 256 bytes")
		}
	}
	var err error
	if q.Since, err = parseAuditTime(v.Get("since"), "since"); err != nil {
		return q, err
	}
	if q.Until, err = parseAuditTime(v.Get("until"), "until"); err != nil {
		return q, err
	}
	if c := v.Get("cursor"); c != "" {
		if q.After, err = strconv.ParseUint(c, 10, 64); err != nil {
			return q, errs.Invalid("cursor must be a next_cursor from an earlier page")
		}
	}
	for name, dst := range map[string]*int{"limit": &q.Limit, "tail": &q.Tail} {
		if s := v.Get(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > audit.MaxPage {
				return q, errs.Invalid("%s must be between 0 and %d", name, audit.MaxPage)
			}
			*dst = n
		}
	}
	return q, nil
}

// parseAuditTime reads RFC 3339, or a duration meaning that long ago
// ("1h").
func parseAuditTime(s, name string) (time.Time, error) {
	if t, ok := audit.ParseWhen(s); ok {
		return t, nil
	}
	return time.Time{}, errs.Invalid("%s must be an RFC 3339 time or a duration ago (e.g. 1h)", name)
}

// auditRequest is the preamble of the audit routes: the caller may read
// the log, and the query is well formed (else it answers and reports
// false).
func (s *Server) auditRequest(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) (audit.Query, bool) {
	if err := s.audit.Check(sc); err != nil {
		writeError(w, r, err)
		return audit.Query{}, false
	}
	q, err := auditQueryOf(r)
	if err != nil {
		writeError(w, r, err)
		return q, false
	}
	return q, true
}

// auditQuery answers one page; with wait=DURATION and a cursor it waits
// (long-polls) for records after the cursor when there are none yet.
func (s *Server) auditQuery(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	q, ok := s.auditRequest(w, r, sc)
	if !ok {
		return
	}
	var err error
	var wait time.Duration
	if ws := r.URL.Query().Get("wait"); ws != "" {
		if wait, err = time.ParseDuration(ws); err != nil || wait < 0 || wait > maxAuditWait {
			writeError(w, r, errs.Invalid("wait must be a duration of at most %s", maxAuditWait))
			return
		}
	}
	deadline := time.Now().Add(wait)
	for {
		page, err := s.audit.Query(r.Context(), sc, q)
		if err != nil {
			s.log.Error("audit query", "err", err)
			writeError(w, r, errs.Wrap(errs.CodeInternal, err, "the audit log could not be read"))
			return
		}
		if len(page.Records) > 0 || wait == 0 || q.Tail > 0 || time.Now().After(deadline) {
			writeJSON(w, http.StatusOK, wire.AuditPage(page))
			return
		}
		// Nothing matched up to page.Next: wait for more, then look
		// only at what is new.
		q.After = page.Next
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		more := s.audit.Wait(ctx, q.After)
		cancel()
		if !more {
			writeJSON(w, http.StatusOK, wire.AuditPage(page))
			return
		}
	}
}

// auditExport streams every matching record as JSON lines, exactly as
// stored, so each line can be checked with `paddock audit verify`'s rules.
func (s *Server) auditExport(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	q, ok := s.auditRequest(w, r, sc)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", `attachment; filename="paddock-audit.jsonl"`)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := s.audit.Export(r.Context(), sc, q, bw); err != nil {
		// The status is sent; a cut stream is all a client can be told.
		s.log.Warn("audit export cut short", "err", err)
		return
	}
	_ = bw.Flush()
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request, sc sandbox.Scope) {
	h, err := s.audit.Metrics(sc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.ServeHTTP(w, r)
}
