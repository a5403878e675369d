//go:build linux

package network

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Options configure a Stack. Zero values take the defaults.
type Options struct {
	DB  *sql.DB // holds network_attachments (Migrations)
	Log *slog.Logger
	// HostNS is the path of the network namespace that holds the host
	// side; "" is the server's own. Tests pass one they created.
	HostNS string
	// Instance is this server's network identity (InstanceID of its data
	// directory, from the composition root). With one, the table,
	// interface prefix, pools and egress ports derive from it (each still
	// overridden by its option below when set), the egress listens only
	// on an address of the instance's own pool, and Sweep touches only
	// what carries its names. "": the fixed names and ports, and the
	// egress on wildcard addresses (one server per host).
	Instance string
	// Address plan: PoolV4 is split into /30s, PoolV6 into /64s ("none"
	// for IPv4 only); IfPrefix names the host-side interfaces.
	PoolV4, PoolV6, IfPrefix string
	Table                    string // nftables table ("paddock")
	ProxyPort, DNSPort       uint16 // on the host side (15001, 15053)
	// Upstreams answer allowed names (default: the host's resolv.conf).
	Upstreams []netip.AddrPort
	// Static names (--dns-host) and the admin's exceptions to the
	// refused ranges (--egress-allow-cidr).
	Static    map[string][]netip.Addr
	AllowCIDR []netip.Prefix
	// Egress limits and timeouts (see egress.Options).
	Egress egress.Options
}

// SetupHook may add files and proxy-related variables (runtime.NetEnvKeys)
// to what a sandbox installs when it is attached (secret injection adds
// its CA bundle here).
type SetupHook func(ctx context.Context, id string, p runtime.NetPolicy, s *runtime.NetSetup) error

// Stack is the sandboxes' network: interfaces, the nftables table, the
// egress proxy and resolver. It implements runtime.Network.
type Stack struct {
	o      Options
	log    *slog.Logger
	plan   Plan
	anchor []netip.Addr // the instance's own egress addresses (on the host's loopback)
	ns     *hostNS
	h      *netlink.Handle // in the host namespace
	rules  ruleset
	db     attachStore
	eg     *egress.Server
	guard  *policy.Guard
	hook   atomic.Pointer[SetupHook]

	mu    sync.Mutex
	att   map[string]*attachment
	used  []bool               // slots
	prep  map[uint64]*prepared // prepared namespaces by inode (prepare_linux.go)
	next  int                  // where the next slot search starts (delays reuse)
	done  bool                 // closed: the netlink handle is gone
	stop  chan struct{}
	wg    sync.WaitGroup
	close sync.Once
}

// attachment is one attached sandbox.
type attachment struct {
	id     string
	slot   Slot
	pid    int
	addrs  []netip.Addr
	policy runtime.NetPolicy
}

// New builds the stack: the nftables table (replacing any earlier one),
// the proxy's and resolver's sockets, and the attachments recorded by an
// earlier server.
func New(ctx context.Context, o Options) (_ *Stack, err error) {
	if o.DB == nil {
		return nil, errors.New("network: a database is required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Instance != "" && !validInstance(o.Instance) {
		return nil, fmt.Errorf("network: instance %q: want %d lower-case hex digits (InstanceID)", o.Instance, InstanceIDLen)
	}
	ns, err := openHostNS(o.HostNS)
	if err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	var id identity
	if o.Instance != "" {
		if id, err = resolveIdentity(ctx, o, ns); err != nil {
			ns.close()
			return nil, err
		}
	}
	if id.ID != "" {
		o.PoolV4 = cmp.Or(o.PoolV4, id.PoolV4)
		if o.PoolV6 != "none" {
			o.PoolV6 = cmp.Or(o.PoolV6, id.PoolV6)
		}
		o.IfPrefix = cmp.Or(o.IfPrefix, instanceIfPrefix(id.ID))
		v4, _ := netip.ParsePrefix(id.PoolV4)
		o.Table = cmp.Or(o.Table, tableFor(id.ID, v4))
		o.ProxyPort = cmp.Or(o.ProxyPort, id.ProxyPort)
		o.DNSPort = cmp.Or(o.DNSPort, id.DNSPort)
	}
	if o.PoolV4 == "" {
		o.PoolV4 = DefaultPoolV4
	}
	switch o.PoolV6 {
	case "":
		o.PoolV6 = DefaultPoolV6
	case "none":
		o.PoolV6 = ""
	}
	if o.IfPrefix == "" {
		o.IfPrefix = DefaultIfPrefix
	}
	if o.Table == "" {
		o.Table = "paddock"
	}
	if o.ProxyPort == 0 {
		o.ProxyPort = 15001
	}
	if o.DNSPort == 0 {
		o.DNSPort = 15053
	}
	plan, err := NewPlan(o.PoolV4, o.PoolV6, o.IfPrefix)
	if err != nil {
		ns.close()
		return nil, fmt.Errorf("network: %w", err)
	}
	if plan.V6.IsValid() && !ipv6Available() {
		o.Log.Warn("IPv6 is not available on this host; sandboxes get IPv4 only")
		plan.V6 = netip.Prefix{}
	}
	slots := plan.Slots
	var anchor []netip.Addr
	if id.ID != "" {
		// The last slot is the instance's anchor: its host-side
		// addresses, on the host's loopback, are where its egress listens.
		slots--
		last := plan.Slot(plan.Slots - 1)
		anchor = append(anchor, last.HostV4)
		if last.HostV6.IsValid() {
			anchor = append(anchor, last.HostV6)
		}
	}
	if o.Upstreams == nil {
		o.Upstreams = hostResolvers("/etc/resolv.conf")
	}
	s := &Stack{o: o, log: o.Log, plan: plan, db: attachStore{o.DB}, att: map[string]*attachment{},
		prep: map[uint64]*prepared{},
		used: make([]bool, slots), stop: make(chan struct{}), ns: ns, anchor: anchor,
		rules: ruleset{table: o.Table, prefix: plan.Prefix, proxyPort: o.ProxyPort, dnsPort: o.DNSPort}}
	for _, a := range anchor {
		if a.Is4() {
			s.rules.anchor4 = a
		} else {
			s.rules.anchor6 = a
		}
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.ns.fd >= 0 {
		s.h, err = netlink.NewHandleAt(netns.NsHandle(s.ns.fd), unix.NETLINK_ROUTE)
	} else {
		s.h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
	}
	if err != nil {
		return nil, fmt.Errorf("network: netlink: %w", err)
	}
	if err := s.addAnchors(); err != nil {
		return nil, err
	}
	if err := s.rules.install(s.ns.fd); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	s.guard = policy.NewGuard(o.AllowCIDR, plan.Pools())
	s.refreshHostAddrs()
	eo := o.Egress
	eo.Log, eo.Dial, eo.Upstreams, eo.Static, eo.Guard = o.Log, s.ns.dial, o.Upstreams, o.Static, s.guard
	if s.rules.anchored() {
		// Sandboxes address the proxy at their gateway; dnat takes that to
		// the anchor, so the connection's original destination is the
		// gateway, not the proxy's own address.
		eo.Explicit = s.isGatewayProxy
	}
	if s.eg, err = egress.New(eo); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	if err := s.listen(); err != nil {
		return nil, err
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	s.wg.Add(1)
	go s.watchHostAddrs()
	return s, nil
}

// Egress is the stack's proxy and resolver (for SetSink, SetMetrics,
// SetInterceptor).
func (s *Stack) Egress() *egress.Server { return s.eg }

// Plan is the address plan in use.
func (s *Stack) Plan() Plan { return s.plan }

// Guard is the egress proxy's address guard (admin exceptions, the
// sandbox pools, the host's own addresses): the build fetcher's too.
func (s *Stack) Guard() *policy.Guard { return s.guard }

// Ports are the egress proxy's and resolver's ports on the host side
// (the instance's, or as configured).
func (s *Stack) Ports() (proxy, dns uint16) { return s.o.ProxyPort, s.o.DNSPort }

// Table is the stack's nftables table.
func (s *Stack) Table() string { return s.o.Table }

// Attachment returns the slot of an attached sandbox (its addresses and
// host-side interface).
func (s *Stack) Attachment(id string) (Slot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.att[id]
	if a == nil {
		return Slot{}, false
	}
	return a.slot, true
}

// SetSetupHook installs (or, nil, removes) a setup hook.
func (s *Stack) SetSetupHook(h SetupHook) { s.hook.Store(&h) }

// Close stops the proxy and resolver. Interfaces, addresses and the
// table stay: running sandboxes keep them, and the next server reloads
// them.
func (s *Stack) Close() error {
	s.close.Do(func() {
		s.releasePrepared()
		s.mu.Lock()
		s.done = true // a closed handle would act on the process's own namespace
		idle := len(s.att) == 0
		s.mu.Unlock()
		close(s.stop)
		if s.eg != nil {
			_ = s.eg.Close()
		}
		s.wg.Wait()
		// The table stays while sandboxes are attached: they outlive the
		// server (reattached at its next start), and without the table
		// their interfaces would reach the host's services. With none left,
		// nothing needs it.
		if idle {
			if err := s.rules.remove(s.ns.fd); err != nil {
				s.log.Warn("network: cannot remove the nftables table", "err", err)
			}
			s.removeAnchors()
		}
		if s.h != nil {
			s.h.Close()
		}
		s.ns.close()
	})
	return nil
}

// listen opens the proxy's and resolver's sockets in the host namespace:
// on the instance's anchor addresses, or (without an instance) on
// wildcard addresses. The table lets only sandbox interfaces reach them,
// and the proxy answers only sandbox sources.
func (s *Stack) listen() error {
	var proxy, dnsTCP []net.Listener
	var dnsUDP []net.PacketConn
	fams := []string{"4"}
	if s.plan.V6.IsValid() {
		fams = append(fams, "6")
	}
	fail := func(err error) error {
		for _, l := range append(proxy, dnsTCP...) {
			l.Close()
		}
		for _, p := range dnsUDP {
			p.Close()
		}
		return fmt.Errorf("network: %w", err)
	}
	for _, f := range fams {
		any := "0.0.0.0"
		if f == "6" {
			any = "::"
		}
		if s.rules.anchored() {
			a := s.rules.anchor4
			if f == "6" {
				a = s.rules.anchor6
			}
			if !a.IsValid() {
				continue
			}
			any = a.String() // only where this instance's sandboxes are sent
		}
		ln, err := s.ns.listen("tcp"+f, net.JoinHostPort(any, strconv.Itoa(int(s.o.ProxyPort))))
		if err != nil {
			return fail(fmt.Errorf("egress proxy: %w", err))
		}
		proxy = append(proxy, ln)
		dl, err := s.ns.listen("tcp"+f, net.JoinHostPort(any, strconv.Itoa(int(s.o.DNSPort))))
		if err != nil {
			return fail(fmt.Errorf("egress resolver: %w", err))
		}
		dnsTCP = append(dnsTCP, dl)
		pc, err := s.ns.listenPacket("udp"+f, net.JoinHostPort(any, strconv.Itoa(int(s.o.DNSPort))))
		if err != nil {
			return fail(fmt.Errorf("egress resolver: %w", err))
		}
		dnsUDP = append(dnsUDP, pc)
	}
	return s.eg.Serve(proxy, dnsUDP, dnsTCP)
}

// load reloads the attachments of an earlier server.
func (s *Stack) load(ctx context.Context) error {
	recs, err := s.db.list(ctx)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Slot < 0 || r.Slot >= len(s.used) || s.used[r.Slot] {
			s.log.Warn("network: recorded attachment outside the pool; forgetting it", "sandbox", r.Sandbox, "slot", r.Slot)
			_ = s.db.delete(ctx, r.Sandbox)
			continue
		}
		pol, err := policy.CompileDeny(r.Policy.Mode, r.Policy.Allow, r.Policy.AllowCIDR, r.Policy.DenyCIDR)
		if err != nil {
			s.log.Warn("network: recorded policy no longer valid; the sandbox gets none", "sandbox", r.Sandbox, "err", err)
			pol, _ = policy.Compile(policy.ModeNone, nil, nil)
		}
		slot := s.plan.Slot(r.Slot)
		slot.IfName = r.IfName
		s.used[r.Slot] = true
		s.att[r.Sandbox] = &attachment{id: r.Sandbox, slot: slot, pid: r.Pid, addrs: r.Addrs, policy: r.Policy}
		s.eg.Set(r.Sandbox, "", r.Addrs, pol)
	}
	if len(recs) > 0 {
		s.log.Info("network: attachments reloaded", "count", len(s.att))
	}
	return nil
}

// Attach implements runtime.Network.
func (s *Stack) Attach(ctx context.Context, id string, pid int, p runtime.NetPolicy) (runtime.NetSetup, error) {
	if !p.Networked() {
		return runtime.NetSetup{}, errs.Invalid("network: attach needs mode allowlist or open")
	}
	pol, err := policy.CompileDeny(p.Mode, p.Allow, p.AllowCIDR, p.DenyCIDR)
	if err != nil {
		return runtime.NetSetup{}, errs.Invalid("%s", err.Error())
	}
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return runtime.NetSetup{}, errs.New(errs.CodeUnavailable, "the sandbox network is shut down")
	}
	a := s.att[id]
	if a != nil && a.pid == pid {
		// A policy change: the interface stays, new connections follow
		// the new policy at once.
		a.policy = p
		s.mu.Unlock()
		if err := s.db.setPolicy(ctx, id, p); err != nil {
			return runtime.NetSetup{}, err
		}
		s.eg.Set(id, "", a.addrs, pol)
		return s.setup(ctx, id, a)
	}
	s.mu.Unlock()
	if a != nil { // the sandbox was restarted under the same id
		if err := s.Detach(ctx, id); err != nil {
			return runtime.NetSetup{}, err
		}
	}
	// A sandbox started in a prepared namespace has its interface
	// already: only the row and the policy remain.
	pre := s.takePrepared(pid)
	if pre != nil {
		defer unix.Close(pre.fd) // the sandbox holds its namespace now
	}
	s.mu.Lock()
	var slot int
	if pre != nil {
		slot = pre.slot.Index
	} else {
		var ok bool
		if slot, ok = s.alloc(); !ok {
			s.mu.Unlock()
			return runtime.NetSetup{}, errs.New(errs.CodeLimit, "the sandbox network has no free addresses (pool %s)", s.plan.V4)
		}
	}
	a = &attachment{id: id, slot: s.plan.Slot(slot), pid: pid, policy: p}
	a.addrs = []netip.Addr{a.slot.SbV4}
	if a.slot.SbV6.IsValid() {
		a.addrs = append(a.addrs, a.slot.SbV6)
	}
	s.att[id] = a
	s.mu.Unlock()
	// The row and the interface are made at once (they are independent,
	// and a create waits for both). A crash in between leaves either a
	// row or an interface named after the slot; Sweep removes both, and
	// the interface dies with the sandbox's namespace anyway.
	dbErr := make(chan error, 1)
	go func() {
		dbErr <- s.db.put(ctx, record{Sandbox: id, Slot: slot, IfName: a.slot.IfName, Pid: pid, Addrs: a.addrs, Policy: p})
	}()
	var linkErr error
	if pre == nil {
		linkErr = s.createLink(a.slot, pid)
	}
	if err := errors.Join(linkErr, <-dbErr); err != nil {
		_ = s.deleteLink(a.slot.IfName)
		_ = s.db.delete(context.WithoutCancel(ctx), id)
		s.forget(a)
		return runtime.NetSetup{}, err
	}
	s.eg.Set(id, "", a.addrs, pol)
	return s.setup(ctx, id, a)
}

func (s *Stack) alloc() (int, bool) {
	for i := 0; i < len(s.used); i++ {
		n := (s.next + i) % len(s.used)
		if !s.used[n] {
			s.used[n] = true
			s.next = n + 1
			return n, true
		}
	}
	return 0, false
}

func (s *Stack) forget(a *attachment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.att[a.id] == a {
		delete(s.att, a.id)
	}
	s.used[a.slot.Index] = false
}

// setup is what the guest installs for a.
func (s *Stack) setup(ctx context.Context, id string, a *attachment) (runtime.NetSetup, error) {
	gw := a.slot.HostV4.String()
	proxy := "http://" + net.JoinHostPort(gw, strconv.Itoa(int(s.o.ProxyPort)))
	st := runtime.NetSetup{
		ResolvConf: "# paddock: names resolve through the egress resolver (docs/network.md)\nnameserver " + gw +
			"\noptions timeout:2 attempts:3\n",
		Env: map[string]string{
			"HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy, "https_proxy": proxy,
			"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
		},
	}
	if h := s.hook.Load(); h != nil && *h != nil {
		if err := (*h)(ctx, id, a.policy, &st); err != nil {
			return runtime.NetSetup{}, fmt.Errorf("network setup hook: %w", err)
		}
		allowed := map[string]bool{}
		for _, k := range runtime.NetEnvKeys {
			allowed[k] = true
		}
		for k := range st.Env {
			if !allowed[k] {
				return runtime.NetSetup{}, fmt.Errorf("network setup hook set %s, which is not in runtime.NetEnvKeys", k)
			}
		}
	}
	return st, nil
}

// Detach implements runtime.Network.
func (s *Stack) Detach(ctx context.Context, id string) error {
	s.mu.Lock()
	a, done := s.att[id], s.done
	s.mu.Unlock()
	if a == nil {
		return nil
	}
	if done {
		return errs.New(errs.CodeUnavailable, "the sandbox network is shut down")
	}
	s.eg.Remove(id)
	err := s.deleteLink(a.slot.IfName)
	if derr := s.db.delete(context.WithoutCancel(ctx), id); err == nil {
		err = derr
	}
	s.forget(a)
	return err
}

// Sweep implements runtime.Network: attachments of sandboxes not in keep,
// and sandbox interfaces nobody recorded, are removed.
func (s *Stack) Sweep(ctx context.Context, keep map[string]bool) (int, error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return 0, errs.New(errs.CodeUnavailable, "the sandbox network is shut down")
	}
	var gone []string
	known := map[string]bool{}
	for id, a := range s.att {
		if keep[id] {
			known[a.slot.IfName] = true
		} else {
			gone = append(gone, id)
		}
	}
	s.mu.Unlock()
	n := 0
	var firstErr error
	for _, id := range gone {
		s.log.Info("network: sweeping the attachment of an unknown sandbox", "sandbox", id)
		if err := s.Detach(ctx, id); err != nil && firstErr == nil {
			firstErr = err
		}
		n++
	}
	links, err := s.h.LinkList()
	if err != nil {
		return n, fmt.Errorf("network: list interfaces: %w", err)
	}
	for _, l := range links {
		name := l.Attrs().Name
		if _, ours := s.plan.slotOf(name); !ours || known[name] || l.Type() != "veth" {
			continue
		}
		s.mu.Lock()
		inUse := false
		for _, a := range s.att {
			inUse = inUse || a.slot.IfName == name
		}
		for _, p := range s.prep { // prepared for a sandbox (prepare_linux.go)
			inUse = inUse || p.slot.IfName == name
		}
		s.mu.Unlock()
		if inUse {
			continue
		}
		s.log.Info("network: removing a leftover sandbox interface", "interface", name)
		if err := s.deleteLink(name); err != nil && firstErr == nil {
			firstErr = err
		}
		n++
	}
	return n, firstErr
}

// refreshHostAddrs tells the guard the host's own addresses (a sandbox
// must not reach the host through any of them).
func (s *Stack) refreshHostAddrs() {
	addrs, err := s.h.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		s.log.Warn("network: cannot list the host's addresses", "err", err)
		return
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		inPool := false
		for _, p := range s.plan.Pools() {
			inPool = inPool || p.Contains(ip)
		}
		if !inPool { // the pools are refused as a whole
			out = append(out, ip)
		}
	}
	s.guard.SetHostAddrs(out)
}

func (s *Stack) watchHostAddrs() {
	defer s.wg.Done()
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.refreshHostAddrs()
		}
	}
}

// ipv6Available reports whether this kernel has IPv6.
func ipv6Available() bool {
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// hostResolvers reads the nameservers of a resolv.conf (port 53).
func hostResolvers(path string) []netip.AddrPort {
	b, err := readFileLimit(path, 64<<10)
	if err != nil {
		return nil
	}
	var out []netip.AddrPort
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			if a, err := netip.ParseAddr(f[1]); err == nil {
				out = append(out, netip.AddrPortFrom(a.WithZone(""), 53))
			}
		}
	}
	return out
}
