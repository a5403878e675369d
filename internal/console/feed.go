package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Lister is the manager's in-memory sandbox list (*sandbox.Manager). The
// feed uses it only to notice that a tenant's list changed; what a page
// receives always comes from the REST API, with the session's key.
type Lister interface {
	List(ctx context.Context, sc sandbox.Scope, match map[string]string) ([]sandbox.Sandbox, error)
}

// Feed timing.
const (
	watchEvery      = 250 * time.Millisecond // how often the watcher compares lists
	FallbackRefresh = 5 * time.Second        // without a Lister
	safetyRefresh   = time.Minute            // with one: catches anything the digest missed
	heartbeat       = 10 * time.Second       // a ping, and the key checked again
	maxListBytes    = 32 << 20
)

// hub is the watcher: one goroutine, running while any feed is open,
// that compares a digest of each watched tenant's list and wakes that
// tenant's feeds when it changes. Pages never poll: an idle console costs
// the server a digest of an in-memory list four times a second.
type hub struct {
	list Lister
	log  *slog.Logger

	mu      sync.Mutex
	subs    map[string]map[*sub]struct{} // by tenant
	digests map[string]uint64
	running bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

type sub struct {
	tenant string
	kick   chan struct{}
}

func newHub(l Lister, log *slog.Logger) *hub {
	return &hub{list: l, log: log, subs: map[string]map[*sub]struct{}{}, digests: map[string]uint64{}, stop: make(chan struct{})}
}

func (h *hub) subscribe(tenant string) (*sub, func()) {
	s := &sub{tenant: tenant, kick: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[tenant] == nil {
		h.subs[tenant] = map[*sub]struct{}{}
		if h.list != nil {
			h.digests[tenant] = h.digest(tenant)
		}
	}
	h.subs[tenant][s] = struct{}{}
	if h.list != nil && !h.running && !h.closed {
		h.running = true
		h.wg.Add(1)
		go h.watch()
	}
	return s, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[tenant], s)
		if len(h.subs[tenant]) == 0 {
			delete(h.subs, tenant)
			delete(h.digests, tenant)
		}
	}
}

func (h *hub) digest(tenant string) uint64 {
	f := fnv.New64a()
	enc := json.NewEncoder(f)
	// The server's own look at the tenant's list (it reads, for no caller).
	list, _ := h.list.List(context.Background(), sandbox.Scope{Tenant: tenant, Actor: "console", Rights: rights.Of(rights.Read)}, nil)
	for _, sb := range list {
		_ = enc.Encode(sb)
	}
	return f.Sum64()
}

func (h *hub) watch() {
	defer h.wg.Done()
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		if len(h.subs) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		tenants := make([]string, 0, len(h.subs))
		for tn := range h.subs {
			tenants = append(tenants, tn)
		}
		h.mu.Unlock()
		for _, tn := range tenants {
			d := h.digest(tn)
			h.mu.Lock()
			if old, ok := h.digests[tn]; ok && old != d {
				h.digests[tn] = d
				for s := range h.subs[tn] {
					select {
					case s.kick <- struct{}{}:
					default:
					}
				}
			}
			h.mu.Unlock()
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// feed streams the session's sandbox list as server-sent events:
// "snapshot" {"sandboxes":[...]} first, then "changes" {"upsert":[...],
// "remove":[ids]} when something changed, "error" with the API's error
// when the list cannot be read, and "signedout" when the session ends
// (sign-out, expiry, or its key no longer authenticating).
func (c *Console) feed(w http.ResponseWriter, r *http.Request, s *session) {
	rc := http.NewResponseController(w)
	up, err := c.upstream(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies must not buffer a stream
	w.WriteHeader(http.StatusOK)
	// A feed lives as long as the page: lift the server's write deadline.
	_ = rc.SetWriteDeadline(time.Time{})
	ctx := r.Context()
	// Feeds never go idle, so a graceful shutdown would wait for them
	// until its deadline: they end when the server starts shutting down.
	if srv, ok := ctx.Value(http.ServerContextKey).(*http.Server); ok {
		if _, seen := c.servers.LoadOrStore(srv, true); !seen {
			srv.RegisterOnShutdown(c.feeds.close)
		}
	}
	sub, unsub := c.feeds.subscribe(s.p.Tenant)
	defer unsub()
	known := map[string]string{}
	first := true
	refresh := func() bool {
		list, apiErr := c.fetchList(ctx, up, r, s)
		if apiErr != nil {
			if errs.CodeOf(apiErr) == errs.CodeUnauthenticated {
				c.st.endKey(s.p)
				event(w, "signedout", map[string]string{"message": "the session ended: its key no longer authenticates"})
			} else {
				var b errorBody
				b.Error.Code, b.Error.Message = string(errs.CodeOf(apiErr)), errs.Public(apiErr)
				event(w, "error", b)
			}
			_ = rc.Flush()
			return false
		}
		if first {
			first = false
			raws := make([]json.RawMessage, 0, len(list))
			for _, it := range list {
				known[it.id] = string(it.raw)
				raws = append(raws, it.raw)
			}
			event(w, "snapshot", map[string]any{"sandboxes": raws})
		} else {
			upsert, remove := []json.RawMessage{}, []string{}
			seen := make(map[string]bool, len(list))
			for _, it := range list {
				seen[it.id] = true
				if known[it.id] != string(it.raw) {
					known[it.id] = string(it.raw)
					upsert = append(upsert, it.raw)
				}
			}
			for id := range known {
				if !seen[id] {
					delete(known, id)
					remove = append(remove, id)
				}
			}
			if len(upsert) == 0 && len(remove) == 0 {
				return true
			}
			event(w, "changes", map[string]any{"upsert": upsert, "remove": remove})
		}
		return rc.Flush() == nil
	}
	if !refresh() {
		return
	}
	every := safetyRefresh
	if c.o.Sandboxes == nil {
		every = FallbackRefresh
	}
	slow := time.NewTicker(every)
	defer slow.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.feeds.stop:
			return
		case <-s.Done():
			event(w, "signedout", map[string]string{"message": "the session ended"})
			_ = rc.Flush()
			return
		case <-sub.kick:
			if !refresh() {
				return
			}
		case <-slow.C:
			if !refresh() {
				return
			}
		case <-beat.C:
			if !c.st.touch(s) || !c.stillValid(ctx, s) {
				event(w, "signedout", map[string]string{"message": "the session ended"})
				_ = rc.Flush()
				return
			}
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func event(w http.ResponseWriter, name string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
}

type listItem struct {
	id  string
	raw json.RawMessage
}

// fetchList asks the REST API for the session's sandboxes, as its key.
func (c *Console) fetchList(ctx context.Context, up http.Handler, orig *http.Request, s *session) ([]listItem, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/v1/sandboxes", nil)
	if err != nil {
		return nil, err
	}
	req.Host, req.RemoteAddr, req.TLS = orig.Host, orig.RemoteAddr, orig.TLS
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("User-Agent", "paddock-console-feed")
	rec := &recorder{h: http.Header{}}
	up.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.over {
		return nil, errs.New(errs.CodeTooLarge, "the sandbox list is too large for the console")
	}
	if rec.status != http.StatusOK {
		var b errorBody
		if json.Unmarshal(rec.buf.Bytes(), &b) != nil || b.Error.Code == "" {
			return nil, errs.New(errs.CodeInternal, "the API answered %d", rec.status)
		}
		return nil, errs.New(errs.Code(b.Error.Code), "%s", b.Error.Message)
	}
	var body struct {
		Sandboxes []json.RawMessage `json:"sandboxes"`
	}
	if err := json.Unmarshal(rec.buf.Bytes(), &body); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "the API's sandbox list did not parse")
	}
	out := make([]listItem, 0, len(body.Sandboxes))
	for _, raw := range body.Sandboxes {
		var id struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &id) != nil || id.ID == "" {
			continue
		}
		var cb bytes.Buffer
		if json.Compact(&cb, raw) != nil {
			continue
		}
		out = append(out, listItem{id: id.ID, raw: cb.Bytes()})
	}
	return out, nil
}

// recorder keeps an in-process answer, bounded.
type recorder struct {
	h      http.Header
	status int
	buf    bytes.Buffer
	over   bool
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.buf.Len()+len(b) > maxListBytes {
		r.over = true
		return 0, errs.New(errs.CodeTooLarge, "too large")
	}
	return r.buf.Write(b)
}
