//go:build linux

package hostile

// RAM-backed writable layers (issue 14, item 7): where layers are tmpfs a
// sandbox's disk is RAM, and a 64 MiB sandbox got a 64 GiB layer on a
// 24 GiB host while a tenant with a 128 MiB memory quota pinned 4 GiB.
// Disk now counts against memory quotas and the host's RAM there.

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

func memTotalMB(t *testing.T) int64 {
	f, err := os.Open("/proc/meminfo")
	must(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			must(t, err)
			return kb >> 10
		}
	}
	t.Fatal("no MemTotal")
	return 0
}

// The four steps. Positive controls: a sandbox may take a large layer
// (60% of the host's RAM: a ceiling, not RAM used), and a tenant's sandbox
// whose memory and disk fit its quota is created. Sandboxed: a layer
// bigger than the host's RAM is refused naming the numbers, a second 60%
// layer is refused (the host cannot hold both), the tenant's 64 MiB
// sandbox with a 4 GiB layer is refused by its 128 MiB memory quota, and
// the default disk is small. The server answers; the refusals are
// recorded.
func TestTmpfsLayersCounted(t *testing.T) {
	s := startServer(t, serverOptions{})
	if !strings.Contains(s.log(), "writable layers are tmpfs") {
		t.Skip("writable layers are not tmpfs on this host (XFS): their disk is not RAM")
	}
	ram := memTotalMB(t)
	ctx := ctxT(t, 2*time.Minute)
	big, err := s.c.Create(ctx, client.Spec{MemoryMB: 64, DiskMB: ram * 6 / 10})
	if err != nil {
		t.Fatalf("positive control: a layer of 60%% of the host's RAM: %v", err)
	}
	if _, err := s.c.Create(ctx, client.Spec{MemoryMB: 64, DiskMB: ram * 6 / 10}); !isStatus(err, 429) ||
		!strings.Contains(err.Error(), "writable layers are RAM (tmpfs)") || !strings.Contains(err.Error(), strconv.FormatInt(ram, 10)+" MiB") {
		t.Errorf("a second 60%% layer: %v", err)
	}
	// (the default limits cap disk_mb at the host's RAM; the manager's
	// own check says the same for limits that do not)
	if _, err := s.c.Create(ctx, client.Spec{MemoryMB: 64, DiskMB: ram + 1024}); !isStatus(err, 400) ||
		!strings.Contains(err.Error(), strconv.FormatInt(ram, 10)) {
		t.Errorf("a layer larger than the host's RAM: %v", err)
	}
	if err := s.c.Delete(ctx, big.ID); err != nil {
		t.Fatal(err)
	}
	// A tenant's memory quota counts its layers.
	if _, err := s.c.CreateTenant(ctx, "small", client.Quotas{MaxTotalMemoryMB: 128}); err != nil {
		t.Fatal(err)
	}
	k, err := s.c.CreateKey(ctx, client.KeyRequest{Tenant: "small", Scopes: []client.Scope{"read", "write", "exec"}})
	must(t, err)
	small := client.New("http://"+s.addr, k.Key).WithHTTPClient(s.hc)
	if _, err := small.Create(ctx, client.Spec{MemoryMB: 64, DiskMB: 4096}); !isStatus(err, 429) ||
		!strings.Contains(err.Error(), "64 memory + 4096 disk, which is RAM on this server") {
		t.Errorf("a 4 GiB layer under a 128 MiB memory quota: %v", err)
	}
	fits, err := small.Create(ctx, client.Spec{MemoryMB: 64, DiskMB: 32})
	if err != nil {
		t.Fatalf("positive control: a sandbox within the quota, disk included: %v", err)
	}
	// The default disk where layers are RAM.
	def, err := s.c.Create(ctx, client.Spec{})
	must(t, err)
	if def.Spec.DiskMB != 256 {
		t.Errorf("default disk on tmpfs layers: %d MiB, want 256", def.Spec.DiskMB)
	}
	s.stillServes(def.ID)
	if res, err := small.Exec(ctx, fits.ID, client.ExecRequest{Cmd: []string{"echo", "ok"}}); err != nil || res.Stdout != "ok\n" {
		t.Errorf("the tenant's sandbox: %+v %v", res, err)
	}
	var seen int
	var buf strings.Builder
	must(t, s.c.AuditExport(ctx, client.AuditQuery{Action: "sandbox.create"}, &buf))
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, `"phase":"`+audit.PhaseResult+`"`) && strings.Contains(line, "which is RAM") ||
			strings.Contains(line, "writable layers are RAM") {
			seen++
		}
	}
	if seen < 2 {
		t.Errorf("the refusals are not in the audit log (%d found)", seen)
	}
}
