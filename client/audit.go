package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/wire"
)

// Audit types (package wire). Zero fields of an AuditQuery match
// everything.
type (
	AuditRecord = wire.AuditRecord
	AuditPage   = wire.AuditPage
	AuditQuery  = wire.AuditQuery
)

func auditValues(q AuditQuery) url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("sandbox", q.Sandbox)
	set("actor", q.Actor)
	set("tenant", q.Tenant)
	set("action", q.Action)
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.UTC().Format(time.RFC3339Nano))
	}
	if q.Cursor > 0 {
		v.Set("cursor", strconv.FormatUint(q.Cursor, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Tail > 0 {
		v.Set("tail", strconv.Itoa(q.Tail))
	}
	if q.Wait > 0 {
		v.Set("wait", q.Wait.String())
	}
	return v
}

// Audit returns one page of audit records (admin scope). Each record is
// the stored line: decode it with json.Unmarshal into an AuditRecord, or
// check it with audit.ParseLine.
func (c *Client) Audit(ctx context.Context, q AuditQuery) (AuditPage, error) {
	var p AuditPage
	path := "/v1/audit"
	if v := auditValues(q); len(v) > 0 {
		path += "?" + v.Encode()
	}
	err := c.call(ctx, http.MethodGet, path, nil, &p)
	return p, err
}

// AuditExport streams every matching record to w as JSON lines, exactly
// as stored (GET /v1/audit/export). Cursor, Limit, Tail and Wait are
// ignored.
func (c *Client) AuditExport(ctx context.Context, q AuditQuery, w io.Writer) error {
	q.Cursor, q.Limit, q.Tail, q.Wait = 0, 0, 0, 0
	path := "/v1/audit/export"
	if v := auditValues(q); len(v) > 0 {
		path += "?" + v.Encode()
	}
	resp, err := c.open(ctx, http.MethodGet, path, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}
