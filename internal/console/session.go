package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
)

// Session limits; Options may lower or raise them.
const (
	DefaultSessionTTL  = 12 * time.Hour // from sign-in, whatever the activity
	DefaultIdleTimeout = time.Hour      // without a request or an open feed
	DefaultMaxSessions = 1024           // server-wide
	DefaultMaxPerKey   = 8              // one key's sessions; the oldest goes first
)

// session is one signed-in console. key is the API key it acts with: it is
// kept here, in the server's memory, and never sent back to the page.
type session struct {
	hash     [32]byte // of the cookie value; the value itself is not kept
	key      string
	p        auth.Principal
	csrf     string
	created  time.Time
	expires  time.Time // absolute
	done     chan struct{}
	lastSeen time.Time // guarded by store.mu
	ended    bool      // guarded by store.mu
}

// Done is closed when the session ends (sign-out, expiry, revoked key):
// the feeds it opened stop then.
func (s *session) Done() <-chan struct{} { return s.done }

// store holds the live sessions, bounded per key and server-wide.
type store struct {
	ttl, idle        time.Duration
	maxAll, maxPerKy int
	now              func() time.Time

	mu   sync.Mutex
	byID map[[32]byte]*session
}

func newStore(ttl, idle time.Duration, maxAll, maxPerKey int) *store {
	return &store{ttl: ttl, idle: idle, maxAll: maxAll, maxPerKy: maxPerKey, now: time.Now, byID: map[[32]byte]*session{}}
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// identity is what groups one key's sessions: the bootstrap admin key and
// stored keys both have a key id.
func identity(p auth.Principal) string { return p.Tenant + "\x00" + p.KeyID }

// create starts a session for key (already authenticated as p) and returns
// it with the cookie value. Beyond the per-key bound the key's oldest
// session ends; when the server holds its maximum the sign-in is refused.
func (st *store) create(key string, p auth.Principal) (*session, string, error) {
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purgeLocked(now)
	var mine []*session
	for _, s := range st.byID {
		if identity(s.p) == identity(p) {
			mine = append(mine, s)
		}
	}
	for len(mine) >= st.maxPerKy {
		oldest := 0
		for i, s := range mine {
			if s.created.Before(mine[oldest].created) {
				oldest = i
			}
		}
		st.endLocked(mine[oldest])
		mine = append(mine[:oldest], mine[oldest+1:]...)
	}
	if len(st.byID) >= st.maxAll {
		return nil, "", errs.New(errs.CodeLimit, "the server holds its maximum of %d console sessions; try again later", st.maxAll)
	}
	value := randomToken()
	s := &session{hash: sha256.Sum256([]byte(value)), key: key, p: p, csrf: randomToken(), created: now,
		expires: now.Add(st.ttl), lastSeen: now, done: make(chan struct{})}
	st.byID[s.hash] = s
	return s, value, nil
}

// get finds the live session of a cookie value and marks it used.
func (st *store) get(value string) (*session, bool) {
	if value == "" || len(value) > 256 {
		return nil, false
	}
	h := sha256.Sum256([]byte(value))
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.byID[h]
	if !ok {
		return nil, false
	}
	if !st.aliveLocked(s, now) {
		st.endLocked(s)
		return nil, false
	}
	s.lastSeen = now
	return s, true
}

// touch keeps a session with an open feed from going idle.
func (st *store) touch(s *session) bool {
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.ended || !st.aliveLocked(s, now) {
		st.endLocked(s)
		return false
	}
	s.lastSeen = now
	return true
}

func (st *store) aliveLocked(s *session, now time.Time) bool {
	return !s.ended && now.Before(s.expires) && now.Sub(s.lastSeen) < st.idle
}

// end ends s (idempotent).
func (st *store) end(s *session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.endLocked(s)
}

func (st *store) endLocked(s *session) {
	if s.ended {
		return
	}
	s.ended = true
	delete(st.byID, s.hash)
	close(s.done)
}

// endKey ends every session of p's key (its key was found revoked).
func (st *store) endKey(p auth.Principal) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, s := range st.byID {
		if identity(s.p) == identity(p) {
			st.endLocked(s)
		}
	}
}

func (st *store) purgeLocked(now time.Time) {
	for _, s := range st.byID {
		if !st.aliveLocked(s, now) {
			st.endLocked(s)
		}
	}
}

// count is the number of live sessions.
func (st *store) count() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purgeLocked(st.now())
	return len(st.byID)
}

// closeAll ends every session (server shutdown).
func (st *store) closeAll() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, s := range st.byID {
		st.endLocked(s)
	}
}

// csrfOK compares a presented CSRF token with the session's, in constant
// time.
func (s *session) csrfOK(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}
