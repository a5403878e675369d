//go:build paddock_otel

package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/sandbox"
)

func TestOTLPExport(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" && r.Method == http.MethodPost {
			posts.Add(1)
		}
	}))
	defer srv.Close()
	tr, err := NewOTLPTracer(context.Background(), srv.URL, "test")
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Tracer: tr})
	h := m.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		NoteRoute(r.Context(), "POST /v1/sandboxes/{id}/exec")
		m.Event(r.Context(), sandbox.Event{Kind: "exec", Phase: "result", Sandbox: "sb", Duration: time.Millisecond, Data: map[string]any{"exit_code": 0}})
	}))
	req := httptest.NewRequest("POST", "/v1/sandboxes/sb/exec", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if posts.Load() == 0 {
		t.Fatal("no spans exported")
	}
}
