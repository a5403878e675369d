//go:build linux

package gvisor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/runtime/gvisor"
)

// TestHibernateWakeNetworked: a networked sandbox hibernated (image on
// disk, nothing else left of it) wakes under the same id with its counter
// carrying on, and its egress passes the host's filtering and proxy again
// through a fresh veth and attachment.
func TestHibernateWakeNetworked(t *testing.T) {
	st := netLab(t)
	e := newEnv(t, func(o *gvisor.Options) { o.Network = st })
	cfg := e.config()
	cfg.Network = &runtime.NetPolicy{Mode: "allowlist", Allow: []string{"allowed.test"}}
	inst := e.create(cfg)
	sh(t, inst, counterScript)
	before := waitCountAbove(t, inst, 5)

	n, err := e.b.Hibernate(t.Context(), inst)
	if err != nil {
		t.Fatalf("hibernate: %v", err)
	}
	if n == 0 {
		t.Fatal("empty image")
	}
	<-inst.Done()
	// Asleep, the sandbox is its image only: no sentry, cgroup, runsc
	// state or sandbox directory.
	e.assertNoTrace(t, cfg.ID)
	if _, err := os.Stat(filepath.Join(e.b.HibernatedImage(cfg.ID), gvisor.ManifestName)); err != nil {
		t.Fatalf("no image: %v", err)
	}

	woke, err := e.b.Wake(t.Context(), cfg)
	if err != nil {
		t.Fatalf("wake: %v", err)
	}
	e.track(woke)
	if c := readCount(t, woke); c < before {
		t.Fatalf("counter restarted: %d < %d", c, before)
	}
	waitCountAbove(t, woke, before)
	if _, err := os.Stat(e.b.HibernatedImage(cfg.ID)); !os.IsNotExist(err) {
		t.Fatalf("image left after wake: %v", err)
	}
	// Egress after the wake: the allowed name through the proxy, the
	// other refused, a direct connection filtered.
	if res := sh(t, woke, "curl -s -m 10 http://allowed.test/"); res.Stdout != "hello from allowed.test\n" {
		t.Fatalf("allowed name after wake: %+v", res)
	}
	if res := sh(t, woke, "curl -s -m 10 -o /dev/null -w '%{http_code}' http://other.test/"); res.Stdout == "200" {
		t.Fatalf("a name outside the allowlist was reached after wake: %+v", res)
	}
	if res := sh(t, woke, "curl -s -m 5 --noproxy '*' http://203.0.113.11/; echo rc=$?"); strings.Contains(res.Stdout, "hello") {
		t.Fatalf("a direct connection passed the filtering after wake: %+v", res)
	}
}

// TestWakeBadImage: a truncated hibernation image is refused before runsc
// reads it, and the sandbox that was to wake leaves nothing.
func TestWakeBadImage(t *testing.T) {
	e := newEnv(t, nil)
	cfg := e.config()
	inst := e.create(cfg)
	if _, err := e.b.Hibernate(t.Context(), inst); err != nil {
		t.Fatalf("hibernate: %v", err)
	}
	img := e.b.HibernatedImage(cfg.ID)
	ents, _ := os.ReadDir(img)
	for _, f := range ents {
		if f.Name() != gvisor.ManifestName {
			if err := os.Truncate(filepath.Join(img, f.Name()), 10); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := e.b.Wake(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("wake of a truncated image: %v", err)
	}
	e.assertNoTrace(t, cfg.ID)
	if err := e.b.DropHibernated(cfg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Wake(t.Context(), cfg); err == nil {
		t.Fatal("wake without an image")
	}
	if n := e.b.SweepHibernated(nil); n != 0 {
		t.Fatalf("swept %d images after drop", n)
	}
}
