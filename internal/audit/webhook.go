package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// WebhookOptions configure a Webhook.
type WebhookOptions struct {
	URL      string
	Queue    int           // violations waiting to be sent; default 1000 (more are dropped and counted)
	Timeout  time.Duration // per attempt; default 5s
	Attempts int           // per violation; default 5, with exponential backoff
	Backoff  time.Duration // first retry delay; default 500ms
	Client   *http.Client
	// Signer, if set, signs each body (X-Paddock-Signature), so the
	// receiver can check it with the audit public key.
	Signer ed25519.PrivateKey
	Log    *slog.Logger
}

// Webhook posts policy violations to a URL from a bounded queue, with
// retries, never blocking the action that caused them.
type Webhook struct {
	o      WebhookOptions
	u      string
	q      chan webhookMsg
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	ctx    context.Context // ends deliveries when Close gives up
	cancel context.CancelFunc

	sent, dropped, failed atomic.Uint64
}

type webhookMsg struct {
	body []byte
}

// WebhookBody is what the webhook receives.
type WebhookBody struct {
	Reason string `json:"reason"`
	Record Record `json:"record"`
	Signer string `json:"signer,omitempty"`
}

// NewWebhook starts a webhook sender.
func NewWebhook(o WebhookOptions) (*Webhook, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("audit webhook %q: want an http(s) URL", o.URL)
	}
	if o.Queue <= 0 {
		o.Queue = 1000
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.Client == nil {
		// No redirects: a receiver must not bounce violations elsewhere.
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	w := &Webhook{o: o, u: u.String(), q: make(chan webhookMsg, o.Queue), stop: make(chan struct{}), done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.run()
	return w, nil
}

// Send queues rec; it reports false if the queue was full (the violation
// is dropped and counted — it is still in the log).
func (w *Webhook) Send(rec Record, reason string) bool {
	b := WebhookBody{Reason: reason, Record: rec}
	if w.o.Signer != nil {
		b.Signer = Fingerprint(w.o.Signer.Public().(ed25519.PublicKey))
	}
	body, err := json.Marshal(b)
	if err != nil {
		w.dropped.Add(1)
		return false
	}
	select {
	case <-w.stop:
		w.dropped.Add(1)
		return false
	default:
	}
	select {
	case w.q <- webhookMsg{body: body}:
		return true
	default:
		w.dropped.Add(1)
		return false
	}
}

// Stats are the sender's counters.
func (w *Webhook) Stats() (sent, dropped, failed uint64) {
	return w.sent.Load(), w.dropped.Load(), w.failed.Load()
}

// Close stops the sender, trying to deliver what is queued until ctx ends.
func (w *Webhook) Close(ctx context.Context) {
	w.once.Do(func() { close(w.stop) })
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel()
		<-w.done
	}
	w.cancel()
}

func (w *Webhook) run() {
	defer close(w.done)
	ctx := w.ctx
	for {
		select {
		case m := <-w.q:
			w.deliver(ctx, m)
		case <-w.stop:
			for {
				select {
				case m := <-w.q:
					if ctx.Err() != nil {
						w.failed.Add(1)
						continue
					}
					w.deliverOnce(ctx, m)
				default:
					return
				}
			}
		}
	}
}

// SignatureMessage is what X-Paddock-Signature signs: the body, after a
// domain prefix (so it can never pass for a checkpoint).
func SignatureMessage(body []byte) []byte {
	return append([]byte("paddock-audit-webhook-v1\n"), body...)
}

func (w *Webhook) deliver(ctx context.Context, m webhookMsg) {
	delay := w.o.Backoff
	for attempt := 1; ; attempt++ {
		err := w.post(ctx, m.body)
		if err == nil {
			w.sent.Add(1)
			return
		}
		var perm permanent
		if attempt == w.o.Attempts || errors.As(err, &perm) {
			w.failed.Add(1)
			w.o.Log.Warn("audit webhook: violation not delivered", "attempts", attempt, "err", err)
			return
		}
		select {
		case <-time.After(delay):
		case <-w.stop:
			// Shutting down: one last try, no more waiting.
			if w.post(ctx, m.body) == nil {
				w.sent.Add(1)
			} else {
				w.failed.Add(1)
			}
			return
		}
		delay *= 2
	}
}

func (w *Webhook) deliverOnce(ctx context.Context, m webhookMsg) {
	if w.post(ctx, m.body) == nil {
		w.sent.Add(1)
	} else {
		w.failed.Add(1)
	}
}

type permanent struct{ error }

func (w *Webhook) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, w.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.u, bytes.NewReader(body))
	if err != nil {
		return permanent{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paddock-audit-webhook/1")
	if w.o.Signer != nil {
		req.Header.Set("X-Paddock-Signature", "ed25519="+base64.StdEncoding.EncodeToString(ed25519.Sign(w.o.Signer, SignatureMessage(body))))
	}
	resp, err := w.o.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return permanent{fmt.Errorf("webhook answered %s", resp.Status)}
}
