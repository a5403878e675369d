package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestWebhookRetriesAndSigns(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	var calls atomic.Int32
	got := make(chan WebhookBody, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable) // retried
			return
		}
		body, _ := io.ReadAll(r.Body)
		sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(r.Header.Get("X-Paddock-Signature"), "ed25519="))
		if err != nil || !ed25519.Verify(pub, SignatureMessage(body), sig) {
			t.Errorf("bad signature")
		}
		var b WebhookBody
		json.Unmarshal(body, &b)
		got <- b
	}))
	defer srv.Close()
	w, err := NewWebhook(WebhookOptions{URL: srv.URL, Backoff: time.Millisecond, Signer: priv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	w.Send(Record{Seq: 9, Action: "http", Phase: PhaseResult, Status: 403, Code: "forbidden"}, "denied:forbidden")
	select {
	case b := <-got:
		if b.Reason != "denied:forbidden" || b.Record.Seq != 9 || b.Signer != Fingerprint(pub) {
			t.Fatalf("body %+v", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("webhook not delivered")
	}
}

// A dead receiver never blocks Send: the queue is bounded and overflow is
// dropped and counted.
func TestWebhookNeverBlocks(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	w, err := NewWebhook(WebhookOptions{URL: srv.URL, Queue: 4, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		w.Send(Record{Seq: uint64(i)}, "x")
	}
	if _, dropped, _ := w.Stats(); dropped < 90 {
		t.Fatalf("dropped %d", dropped)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	w.Close(ctx) // gives up on the stuck receiver
}

func TestWebhookURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "file:///etc/passwd", "http://"} {
		if _, err := NewWebhook(WebhookOptions{URL: u}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

func TestViolation(t *testing.T) {
	cases := []struct {
		rec  Record
		want bool
	}{
		{Record{Phase: PhaseResult, Code: "forbidden"}, true},
		{Record{Phase: PhaseResult, Code: "limit_exceeded"}, true},
		{Record{Phase: PhaseResult, Code: "egress_denied"}, true},
		{Record{Phase: PhaseResult, Status: 429}, true},
		{Record{Phase: PhaseResult, Action: "exec", Result: json.RawMessage(`{"oom_killed":true}`)}, true},
		{Record{Phase: PhaseEvent, Action: "sandbox.fail"}, true},
		{Record{Phase: PhaseEvent, Action: "network.deny"}, true},
		{Record{Phase: PhaseResult, Action: "exec", Result: json.RawMessage(`{"oom_killed":false,"exit_code":1}`)}, false},
		{Record{Phase: PhaseResult, Status: 404, Code: "not_found"}, false},
		{Record{Phase: PhaseIntent, Code: "forbidden"}, false},
	}
	for _, c := range cases {
		if _, got := Violation(&c.rec); got != c.want {
			t.Errorf("Violation(%+v) = %v", c.rec, got)
		}
	}
}
