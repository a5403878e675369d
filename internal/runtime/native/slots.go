package native

import (
	"errors"
	"sync"
)

// errNoSlots means every uid range is in use.
var errNoSlots = errors.New("no free uid range")

// slots hands out uid ranges: slot n maps sandbox uids 0..65535 to host
// uids base+n*65536 onwards, so no two sandboxes share a host uid.
type slots struct {
	mu   sync.Mutex
	used []bool
	next int
}

func newSlots(n int) *slots { return &slots{used: make([]bool, n)} }

func (s *slots) alloc() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(s.used); i++ {
		n := (s.next + i) % len(s.used)
		if !s.used[n] {
			s.used[n] = true
			s.next = n + 1
			return n, nil
		}
	}
	return 0, errNoSlots
}

// claim marks a slot used by a reattached sandbox.
func (s *slots) claim(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n >= len(s.used) || s.used[n] {
		return false
	}
	s.used[n] = true
	return true
}

func (s *slots) free(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= 0 && n < len(s.used) {
		s.used[n] = false
	}
}

// inUse counts the allocated slots.
func (s *slots) inUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.used {
		if u {
			n++
		}
	}
	return n
}
