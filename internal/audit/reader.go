package audit

import (
	"context"
	"io"
	"net/http"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// Reader is the audit log and the metrics as callers read them (the API's
// GET /v1/audit, /v1/audit/export and /metrics): every method checks the
// caller's rights first (package rights). A nil Reader is a server that
// keeps no audit log: it refuses as a real one would, then answers
// unsupported.
type Reader struct{ r *Recorder }

// Reader returns the log's reader.
func (r *Recorder) Reader() *Reader { return &Reader{r: r} }

// may checks that sc may read the log.
func (rd *Reader) may(sc rights.Scope) error {
	if err := sc.Need(rights.Audit); err != nil {
		return err
	}
	if sc.Sandbox != "" {
		return errs.New(errs.CodeForbidden, "a sandbox token cannot read the audit log")
	}
	if rd == nil || rd.r == nil {
		return errs.New(errs.CodeUnsupported, "this server keeps no audit log")
	}
	return nil
}

// Query returns one page of matching records.
func (rd *Reader) Query(ctx context.Context, sc rights.Scope, q Query) (Page, error) {
	if err := rd.may(sc); err != nil {
		return Page{}, err
	}
	return rd.r.Query(ctx, q)
}

// Export writes every matching record to w as JSON lines, exactly as
// stored.
func (rd *Reader) Export(ctx context.Context, sc rights.Scope, q Query, w io.Writer) error {
	if err := rd.may(sc); err != nil {
		return err
	}
	return rd.r.Export(ctx, q, w)
}

// Check reports whether sc may read the log (an export checks before it
// sends its headers).
func (rd *Reader) Check(sc rights.Scope) error { return rd.may(sc) }

// Wait blocks until a record after seq exists or ctx ends (a long-poll of
// a caller that Query let in).
func (rd *Reader) Wait(ctx context.Context, seq uint64) bool {
	if rd == nil || rd.r == nil {
		return false
	}
	return rd.r.Wait(ctx, seq)
}

// Metrics returns the Prometheus exposition's handler, for sc.
func (rd *Reader) Metrics(sc rights.Scope) (http.Handler, error) {
	if err := sc.Need(rights.Audit); err != nil {
		return nil, err
	}
	var h http.Handler
	if rd != nil && rd.r != nil {
		h = rd.r.MetricsHandler()
	}
	if h == nil {
		return nil, errs.New(errs.CodeUnsupported, "this server exports no metrics")
	}
	return h, nil
}
