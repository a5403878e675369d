package audit

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/sandbox"
)

type ridKey struct{}

func TestRecorderEventsAndRequests(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{})
	got := make(chan WebhookBody, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b WebhookBody
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &b)
		got <- b
	}))
	defer hook.Close()
	wh, err := NewWebhook(WebhookOptions{URL: hook.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close(context.Background())
	rec := NewRecorder(l, RecorderOptions{Webhook: wh, RequestID: func(ctx context.Context) string {
		s, _ := ctx.Value(ridKey{}).(string)
		return s
	}})
	var _ sandbox.Observer = rec

	// The API path: middleware → Begin → handler → end.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), ridKey{}, "req-1"))
		end, err := rec.Begin(r, auth.Principal{KeyID: "k_1", Tenant: "acme"}, "POST /v1/sandboxes/{id}/exec")
		if err != nil {
			t.Errorf("begin: %v", err)
			return
		}
		if err := rec.Event(r.Context(), sandbox.Event{Kind: "exec", Phase: "intent", Tenant: "acme", Actor: "k_1", Sandbox: r.PathValue("id"),
			Data: map[string]any{"argv": []string{"sh", "-c", "TOKEN=supersecret123 run"}}}); err != nil {
			t.Errorf("event: %v", err)
		}
		_ = rec.Event(r.Context(), sandbox.Event{Kind: "exec", Phase: "result", Tenant: "acme", Sandbox: r.PathValue("id"),
			Duration: time.Millisecond, Data: map[string]any{"exit_code": 137, "oom_killed": true}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":{"code":"forbidden","message":"no"}}` + "\n"))
		end(http.StatusForbidden)
	})
	srv := httptest.NewServer(rec.Middleware(mux))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/sandboxes/sb123/exec?token=abc", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	page, err := l.Query(context.Background(), Query{Sandbox: "sb123"})
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, raw := range page.Records {
		r, _ := ParseLine(raw)
		recs = append(recs, r)
	}
	if len(recs) != 4 {
		t.Fatalf("want http intent, exec intent, exec result, http result; got %d", len(recs))
	}
	want := []struct{ action, phase string }{{"http", "intent"}, {"exec", "intent"}, {"exec", "result"}, {"http", "result"}}
	for i, w := range want {
		if recs[i].Action != w.action || recs[i].Phase != w.phase || recs[i].Request != "req-1" {
			t.Errorf("record %d: %+v", i, recs[i])
		}
	}
	if recs[3].Status != 403 || recs[3].Code != "forbidden" || recs[3].Actor != "k_1" || recs[3].Tenant != "acme" {
		t.Errorf("http result: %+v", recs[3])
	}
	if strings.Contains(string(recs[0].Args), "abc") || strings.Contains(string(recs[1].Args), "supersecret123") {
		t.Errorf("secrets in the log: %s %s", recs[0].Args, recs[1].Args)
	}
	reasons := map[string]bool{}
	for i := 0; i < 2; i++ {
		select {
		case b := <-got:
			reasons[b.Reason] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("webhook: got %v", reasons)
		}
	}
	if !reasons["oom_killed"] || !reasons["denied:forbidden"] {
		t.Fatalf("webhook reasons %v", reasons)
	}
	l.Close()
}

func TestRecorderFailClosedAndOpen(t *testing.T) {
	l := openTest(t, t.TempDir(), Options{})
	l.Close() // every append now fails
	ev := sandbox.Event{Kind: "exec", Phase: "intent"}
	if err := NewRecorder(l, RecorderOptions{}).Event(context.Background(), ev); err == nil {
		t.Fatal("fail-closed: an unwritable intent must be an error")
	}
	if err := NewRecorder(l, RecorderOptions{FailOpen: true}).Event(context.Background(), ev); err != nil {
		t.Fatalf("fail-open: %v", err)
	}
	r := httptest.NewRequest("GET", "/v1/sandboxes", nil)
	if _, err := NewRecorder(l, RecorderOptions{}).Begin(r, auth.Principal{KeyID: "k"}, "GET /v1/sandboxes"); err == nil {
		t.Fatal("fail-closed Begin must refuse")
	}
}

// {id} is a sandbox only under /v1/sandboxes/.
func TestRecorderSandboxOnlyFromSandboxRoutes(t *testing.T) {
	l := openTest(t, t.TempDir(), Options{})
	defer l.Close()
	rec := NewRecorder(l, RecorderOptions{})
	mux := http.NewServeMux()
	for _, route := range []string{"DELETE /v1/keys/{id}", "GET /v1/sandboxes/{id}"} {
		route := route
		mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			end, err := rec.Begin(r, auth.Principal{KeyID: "admin"}, route)
			if err != nil {
				t.Fatal(err)
			}
			end(200)
		})
	}
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("DELETE", "/v1/keys/k_123", nil))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/sandboxes/sb-1", nil))
	if p, _ := l.Query(context.Background(), Query{Sandbox: "k_123"}); len(p.Records) != 0 {
		t.Error("a key id was recorded as a sandbox")
	}
	if p, _ := l.Query(context.Background(), Query{Sandbox: "sb-1"}); len(p.Records) != 2 {
		t.Errorf("sandbox route: %d records", len(p.Records))
	}
}
