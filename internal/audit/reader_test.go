package audit

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// The reader checks its caller first; the admin is the positive control.
func TestReaderRights(t *testing.T) {
	l, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rd := NewRecorder(l, RecorderOptions{Metrics: http.NotFoundHandler()}).Reader()
	ctx := context.Background()
	admin := rights.Scope{Tenant: "default", Actor: "admin", Rights: rights.All}
	user := rights.Scope{Tenant: "acme", Actor: "k", Rights: rights.FromScopes([]string{"read", "write", "exec"})}
	token := rights.Scope{Tenant: "default", Actor: "admin", Sandbox: "sb-x", Token: true, Rights: rights.All.Without(rights.Admin)}
	if _, err := rd.Query(ctx, user, Query{}); errs.Public(err) != `this key lacks the "admin" scope` {
		t.Errorf("a user key queried: %v", err)
	}
	if err := rd.Export(ctx, user, Query{}, &bytes.Buffer{}); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("a user key exported: %v", err)
	}
	if _, err := rd.Metrics(user); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("a user key read metrics: %v", err)
	}
	if err := rd.Check(token); errs.Public(err) != "a sandbox token cannot read the audit log" {
		t.Errorf("a token: %v", err)
	}
	if _, err := rd.Query(ctx, admin, Query{}); err != nil {
		t.Errorf("admin: %v", err)
	}
	if h, err := rd.Metrics(admin); err != nil || h == nil {
		t.Errorf("admin metrics: %v", err)
	}
	var none *Reader
	if err := none.Check(admin); errs.CodeOf(err) != errs.CodeUnsupported {
		t.Errorf("no log: %v", err)
	}
	if err := none.Check(user); errs.CodeOf(err) != errs.CodeForbidden {
		t.Errorf("no log, user key: %v", err)
	}
	if _, err := none.Metrics(admin); errs.CodeOf(err) != errs.CodeUnsupported {
		t.Errorf("no metrics: %v", err)
	}
}
