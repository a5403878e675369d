package mcp

import (
	"iter"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/errs"
)

// Resource starvation by session flooding: one read-only key opened all
// 1,024 sessions of the server in 0.6 s and every other tenant (the admin
// included) was refused. Sessions are counted per tenant and per key as
// well as in all; each tenant's share is below the whole, each key's below
// its tenant's. A session's owner is recorded when the SDK answers the
// request that opened it (its Mcp-Session-Id); sessions that ended (closed,
// or idle past the timeout) drop out at the next count.

// owner is who opened a session: the tenant and the key (a token's is
// the key that minted it, so minting tokens buys no more sessions).
type owner struct{ tenant, key string }

// sessionOwners records the owner of each open HTTP session, and the
// openings under way (reserved before the SDK creates the session, so
// that concurrent openings cannot pass a limit together).
type sessionOwners struct {
	mu      sync.Mutex
	ids     map[string]opened
	pending map[owner]int
}

// opened is a session's owner and when its opening was answered.
type opened struct {
	owner
	at time.Time
}

// settleGrace: a session just answered may not be in the SDK's list yet
// (the client's initialized notification is still to come), so for this
// long a recorded session counts even when the list lacks it — otherwise
// a flood of concurrent openings slipped a few past the key's limit.
const settleGrace = 30 * time.Second

// reserve admits one more session for o, or says which limit it is over.
// release records the session id the answer carried ("" if none was
// opened) and ends the reservation.
func (so *sessionOwners) reserve(o owner, open iter.Seq[*sdk.ServerSession], lim Options) (release func(id string), err error) {
	so.mu.Lock()
	defer so.mu.Unlock()
	// Listed under the lock: a session recorded by a release is then
	// always in the list (the SDK lists it before it answers).
	live := map[string]bool{}
	for ss := range open {
		live[ss.ID()] = true
	}
	if so.pending == nil {
		so.pending = map[owner]int{}
	}
	var all, tenant, key int
	for id, op := range so.ids {
		if !live[id] && time.Since(op.at) > settleGrace {
			delete(so.ids, id) // ended
			continue
		}
		ow := op.owner
		tenant += b2i(ow.tenant == o.tenant)
		key += b2i(ow == o)
	}
	all = len(live)
	for ow, n := range so.pending {
		all += n
		if ow.tenant == o.tenant {
			tenant += n
		}
		if ow == o {
			key += n
		}
	}
	// The server's limit is its own state (503); a tenant's or a key's is
	// the caller's (429).
	switch {
	case all >= lim.MaxSessions:
		return nil, errs.New(errs.CodeUnavailable, "too many MCP sessions are open; close one (or wait for idle ones to time out)")
	case tenant >= lim.MaxSessionsPerTenant:
		return nil, errs.New(errs.CodeLimit, "tenant %s has %d MCP sessions open, its limit; close one (or wait for idle ones to time out)", o.tenant, tenant)
	case key >= lim.MaxSessionsPerKey:
		return nil, errs.New(errs.CodeLimit, "this key has %d MCP sessions open, its limit; close one (or wait for idle ones to time out)", key)
	}
	so.pending[o]++
	var once sync.Once
	return func(id string) {
		once.Do(func() {
			so.mu.Lock()
			defer so.mu.Unlock()
			if so.pending[o]--; so.pending[o] <= 0 {
				delete(so.pending, o)
			}
			if id != "" {
				so.ids[id] = opened{owner: o, at: time.Now()}
			}
		})
	}, nil
}

// forget drops a session its client closed.
func (so *sessionOwners) forget(id string) {
	so.mu.Lock()
	defer so.mu.Unlock()
	delete(so.ids, id)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
