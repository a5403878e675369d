//go:build linux

package network

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/harden"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Prepared network namespaces (issue 23): the kernel's work on a sandbox's
// network — a new namespace (its loopback registered under RTNL), a veth
// pair, addresses and routes — done before any sandbox asks for it. Made
// in a tight create loop, that work waited on the kernel's teardown of the
// previous sandbox's namespace (cleanup_net holds RTNL across RCU grace
// periods), 15–20 ms of a 30 ms create. A prepared namespace is owned by
// the initial user namespace, so the sandbox that runs in it holds no
// capability over it at all (it cannot even bring an interface up: the
// host did, with the loopback).

// prepared is one namespace made ahead, with the interface of its slot.
type prepared struct {
	s    *Stack
	fd   int    // the namespace, kept alive by this descriptor until used
	ino  uint64 // its inode: how Attach recognises a sandbox started in it
	slot Slot
	once sync.Once
}

func (p *prepared) NetNS() int { return p.fd }

// Release gives back a namespace no sandbox was started in (or whose
// sandbox failed before Attach). After Attach it is a no-op.
func (p *prepared) Release() {
	p.once.Do(func() {
		s := p.s
		s.mu.Lock()
		_, mine := s.prep[p.ino]
		delete(s.prep, p.ino)
		if mine {
			s.used[p.slot.Index] = false
		}
		s.mu.Unlock()
		if mine {
			unix.Close(p.fd)
			// The pair goes with the namespace; deleting the host end
			// now frees the name at once for the slot's next user.
			if err := s.deleteLink(p.slot.IfName); err != nil {
				s.log.Warn("network: removing a prepared interface", "interface", p.slot.IfName, "err", err)
			}
		}
	})
}

// Prepare implements runtime.NetworkPreparer: a new network namespace
// with its loopback up and the interface of a free slot, addressed and
// routed, ready for a sandbox to be started in.
func (s *Stack) Prepare(ctx context.Context) (runtime.PreparedNet, error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil, errs.New(errs.CodeUnavailable, "the sandbox network is shut down")
	}
	idx, ok := s.alloc()
	s.mu.Unlock()
	if !ok {
		return nil, errs.New(errs.CodeLimit, "the sandbox network has no free addresses (pool %s)", s.plan.V4)
	}
	p := &prepared{s: s, fd: -1, slot: s.plan.Slot(idx)}
	fail := func(err error) (runtime.PreparedNet, error) {
		if p.fd >= 0 {
			unix.Close(p.fd)
		}
		_ = s.deleteLink(p.slot.IfName)
		s.mu.Lock()
		s.used[idx] = false
		s.mu.Unlock()
		return nil, err
	}
	fd, err := NewLoopbackNS()
	if err != nil {
		return fail(err)
	}
	p.fd = fd
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fail(fmt.Errorf("network: stat a prepared namespace: %w", err))
	}
	p.ino = st.Ino
	// Known before its interface exists, so that a concurrent Sweep
	// leaves the interface alone.
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return fail(errs.New(errs.CodeUnavailable, "the sandbox network is shut down"))
	}
	s.prep[p.ino] = p
	s.mu.Unlock()
	if err := s.createLinkIn(p.slot, netns.NsHandle(fd)); err != nil {
		s.mu.Lock()
		delete(s.prep, p.ino)
		s.mu.Unlock()
		return fail(err)
	}
	return p, nil
}

// takePrepared returns the prepared namespace pid runs in, if it is one,
// and hands its slot to the caller.
func (s *Stack) takePrepared(pid int) *prepared {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(pid)+"/ns/net", &st); err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prep[st.Ino]
	if p == nil {
		return nil
	}
	delete(s.prep, st.Ino) // Release is now a no-op: the slot is the attachment's
	return p
}

// releasePrepared drops every prepared namespace (the stack closes).
func (s *Stack) releasePrepared() {
	s.mu.Lock()
	ps := make([]*prepared, 0, len(s.prep))
	for _, p := range s.prep {
		ps = append(ps, p)
	}
	s.mu.Unlock()
	for _, p := range ps {
		p.Release()
	}
}

// NewLoopbackNS makes a network namespace owned by the initial user
// namespace with its loopback up, and returns a descriptor on it. The
// namespace is made on a locked thread that is never unlocked, so the
// runtime discards it and no goroutine runs in the new namespace.
func NewLoopbackNS() (int, error) {
	type res struct {
		fd  int
		err error
	}
	c := make(chan res, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread is tainted
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			c <- res{-1, fmt.Errorf("network: new namespace: %w", err)}
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			c <- res{-1, fmt.Errorf("network: new namespace: %w", err)}
			return
		}
		if err := harden.LoopbackUp(); err != nil {
			unix.Close(fd)
			c <- res{-1, fmt.Errorf("network: loopback of a new namespace: %w", err)}
			return
		}
		c <- res{fd, nil}
	}()
	r := <-c
	return r.fd, r.err
}
