package egress

import (
	"strings"
	"testing"
)

func TestSlots(t *testing.T) {
	type take struct {
		tenant, sandbox string
		want            string // "" granted, else the scope that refuses
	}
	for _, tc := range []struct {
		name  string
		max   [3]int // all, per tenant, per sandbox
		takes []take
	}{
		{name: "per sandbox", max: [3]int{10, 10, 2}, takes: []take{
			{"a", "a1", ""}, {"a", "a1", ""}, {"a", "a1", "per-sandbox"}, {"a", "a2", ""}}},
		{name: "per tenant", max: [3]int{10, 3, 2}, takes: []take{
			{"a", "a1", ""}, {"a", "a1", ""}, {"a", "a2", ""}, {"a", "a3", "per-tenant"}, {"b", "b1", ""}}},
		{name: "server-wide", max: [3]int{3, 2, 2}, takes: []take{
			{"a", "a1", ""}, {"a", "a2", ""}, {"b", "b1", ""}, {"c", "c1", "server-wide"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlots("things", tc.max[0], tc.max[1], tc.max[2])
			var rels []func()
			for i, tk := range tc.takes {
				rel, err := s.acquire(tk.tenant, tk.sandbox)
				switch {
				case tk.want == "" && err != nil:
					t.Fatalf("take %d (%s/%s): %v", i, tk.tenant, tk.sandbox, err)
				case tk.want != "" && (err == nil || !strings.Contains(err.Error(), tk.want)):
					t.Fatalf("take %d (%s/%s): err %v, want the %s limit", i, tk.tenant, tk.sandbox, err, tk.want)
				}
				if rel != nil {
					rels = append(rels, rel)
				}
			}
			for _, r := range rels {
				r()
				r() // twice is once
			}
			if u := s.use(); u.Total != 0 || len(u.ByTenant) != 0 {
				t.Fatalf("after release: %+v", u)
			}
		})
	}
}
