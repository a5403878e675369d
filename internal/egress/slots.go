package egress

import (
	"fmt"
	"sync"
)

// slots bounds concurrent uses of a shared resource (proxied connections,
// upstream DNS queries) in all, per tenant and per sandbox. A shared pool
// with only a global bound is a resource-starvation target: one tenant
// with a few sandboxes could hold every slot (issue 14 items 9 and 11);
// the per-tenant bound below the global one leaves the others room.
type slots struct {
	what                       string
	max, perTenant, perSandbox int

	mu        sync.Mutex
	total     int
	byTenant  map[string]int
	bySandbox map[string]int
}

func newSlots(what string, max, perTenant, perSandbox int) *slots {
	return &slots{what: what, max: max, perTenant: perTenant, perSandbox: perSandbox,
		byTenant: map[string]int{}, bySandbox: map[string]int{}}
}

// slotRefusal says which bound refused a slot.
type slotRefusal struct {
	what, scope string
	limit       int
}

func (r *slotRefusal) Error() string {
	return fmt.Sprintf("too many %s (the %s limit of %d)", r.what, r.scope, r.limit)
}

// acquire takes a slot for sandbox of tenant, or says which bound is
// reached. The release it returns may be called more than once.
func (s *slots) acquire(tenant, sandbox string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.bySandbox[sandbox] >= s.perSandbox:
		return nil, &slotRefusal{s.what, "per-sandbox", s.perSandbox}
	case s.byTenant[tenant] >= s.perTenant:
		return nil, &slotRefusal{s.what, "per-tenant", s.perTenant}
	case s.total >= s.max:
		return nil, &slotRefusal{s.what, "server-wide", s.max}
	}
	s.total++
	s.byTenant[tenant]++
	s.bySandbox[sandbox]++
	var once sync.Once
	return func() { once.Do(func() { s.put(tenant, sandbox) }) }, nil
}

func (s *slots) put(tenant, sandbox string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byTenant[tenant]--; s.byTenant[tenant] <= 0 {
		delete(s.byTenant, tenant)
	}
	if s.bySandbox[sandbox]--; s.bySandbox[sandbox] <= 0 {
		delete(s.bySandbox, sandbox)
	}
}

// SlotUse is how many slots are in use, in all and by tenant.
type SlotUse struct {
	Total    int
	ByTenant map[string]int
}

func (s *slots) use() SlotUse {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := SlotUse{Total: s.total, ByTenant: make(map[string]int, len(s.byTenant))}
	for k, v := range s.byTenant {
		u.ByTenant[k] = v
	}
	return u
}
