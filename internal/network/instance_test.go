package network

import (
	"net/netip"
	"strings"
	"testing"
)

func TestChooseIdentity(t *testing.T) {
	want := InstanceID("/var/lib/paddock")
	first := v4Candidates(want)[0]
	second := v4Candidates(want)[1]
	other := InstanceID("/var/lib/other")
	rec := identity{ID: want, PoolV4: second.String(), PoolV6: instanceV6(want), ProxyPort: 15100, DNSPort: 15101}
	for _, tc := range []struct {
		name     string
		rec      identity
		recorded bool
		attached bool
		use      hostUse
		wantID   string
		wantV4   netip.Prefix
	}{
		{name: "new: the first candidate", wantID: want, wantV4: first},
		{name: "new: a used prefix is skipped", use: hostUse{prefixes: []netip.Prefix{netip.PrefixFrom(first.Addr().Next(), 30)}},
			wantID: want, wantV4: second},
		{name: "new: a pool another instance claims is skipped", use: hostUse{tables: []string{tableFor(other, first)}},
			wantID: want, wantV4: second},
		{name: "our own table does not count", use: hostUse{tables: []string{tableFor(want, first)}}, wantID: want, wantV4: first},
		{name: "recorded: the same pool again", rec: rec, recorded: true, wantID: want, wantV4: second},
		{name: "recorded, claimed meanwhile, idle: another", rec: rec, recorded: true,
			use: hostUse{tables: []string{tableFor(other, second)}}, wantID: want, wantV4: first},
		{name: "recorded and attached: kept whatever", rec: rec, recorded: true, attached: true,
			use: hostUse{tables: []string{tableFor(other, second)}}, wantID: want, wantV4: second},
		{name: "sandboxes from before instances: the fixed names", attached: true, wantID: ""},
		{name: "another instance's record, idle: ours", rec: identity{ID: other, PoolV4: first.String()}, recorded: true,
			wantID: want, wantV4: first},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := chooseIdentity(want, tc.rec, tc.recorded, tc.attached, tc.use)
			if err != nil {
				t.Fatal(err)
			}
			if id.ID != tc.wantID {
				t.Fatalf("id %q, want %q", id.ID, tc.wantID)
			}
			if tc.wantID != "" && id.PoolV4 != tc.wantV4.String() {
				t.Fatalf("pool %s, want %s", id.PoolV4, tc.wantV4)
			}
		})
	}
	// Every candidate taken: a clear error naming the flag.
	var all hostUse
	all.prefixes = []netip.Prefix{netip.MustParsePrefix("10.128.0.0/9")}
	if _, err := chooseIdentity(want, identity{}, false, false, all); err == nil || !strings.Contains(err.Error(), "--net-pool-v4") {
		t.Fatalf("no free pool: %v", err)
	}
}

func TestInstanceNames(t *testing.T) {
	a, b := InstanceID("/a"), InstanceID("/b")
	for _, id := range []string{a, b} {
		if !validInstance(id) {
			t.Fatalf("invalid id %q", id)
		}
		p, err := NewPlan(v4Candidates(id)[0].String(), instanceV6(id), instanceIfPrefix(id))
		if err != nil {
			t.Fatalf("the plan of %s: %v", id, err)
		}
		if n := len(p.Slot(p.Slots - 1).IfName); n > 15 {
			t.Fatalf("interface names of %s are %d bytes (IFNAMSIZ 15)", id, n)
		}
		if strings.HasPrefix(instanceIfPrefix(id), DefaultIfPrefix) {
			t.Fatalf("an instance prefix starts with the fixed one: %s", instanceIfPrefix(id))
		}
		proxy, dns := instancePorts(id)
		if proxy < 15100 || dns != proxy+1 || dns > 15900 {
			t.Fatalf("ports %d %d", proxy, dns)
		}
	}
	if instanceV6(a) == instanceV6(b) || instanceIfPrefix(a) == instanceIfPrefix(b) {
		t.Fatal("two instances share names")
	}
}

func FuzzParseTableName(f *testing.F) {
	for _, s := range []string{tableFor("0a1b2", netip.MustParsePrefix("10.200.0.0/16")), "paddock", "paddock-", "paddock-zzzzz-1",
		"paddock-0a1b2-999", "paddock-0a1b2-", "paddock-0a1b2x7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, p, ok := parseTableName(name)
		if !ok {
			return
		}
		if !validInstance(id) || !p.IsValid() || p.Bits() != 16 {
			t.Fatalf("%q parsed to %q %v", name, id, p)
		}
	})
}
