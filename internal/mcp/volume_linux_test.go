//go:build linux

package mcp_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/disk"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/volume"
)

// openTestVolumes opens a volume store in a temporary directory (nil
// where volumes cannot be kept) and unmounts what it mounted at the end.
func openTestVolumes(t testing.TB) *volume.Store {
	dir := filepath.Join(t.TempDir(), "volumes")
	st, err := volume.Open(volume.Options{Dir: dir})
	if err != nil {
		return nil
	}
	t.Cleanup(func() {
		ms, _ := disk.Mounts()
		for _, m := range ms {
			if strings.HasPrefix(m.MountPoint, dir+"/") {
				_ = unix.Unmount(m.MountPoint, unix.MNT_DETACH)
			}
		}
	})
	return st
}

// The volume tools, in this process and through the REST client: make a
// volume, mount it in a sandbox, see it listed as mounted, be refused
// deleting it while mounted, delete it after.
func TestVolumeTools(t *testing.T) {
	testenv.RequireRoot(t)
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("no mkfs.ext4 (e2fsprogs): volumes unavailable")
	}
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	p := auth.Principal{KeyID: k.ID, Tenant: "a", Scopes: k.Scopes}
	viaREST, err := mcp.New(client.New(h.hs.URL, k.Key), mcp.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for name, srv := range map[string]struct {
		s *mcp.Server
		p auth.Principal
	}{"local": {h.srv, p}, "rest": {viaREST, auth.Principal{}}} {
		t.Run(name, func(t *testing.T) {
			cs, done := connectMemory(t, srv.s, srv.p)
			defer func() { _ = cs.Close(); <-done }()
			vol := "v-" + name
			mustOK(t, "volume_create", call(t, cs, "volume_create", map[string]any{"name": vol, "size_mb": 16}, nil))
			wantError(t, "bad name", call(t, cs, "volume_create", map[string]any{"name": "../x"}, nil), "volume name")
			var created struct {
				ID string `json:"id"`
			}
			mustOK(t, "sandbox_create", call(t, cs, "sandbox_create",
				map[string]any{"volumes": []map[string]any{{"name": vol, "path": "/data"}}}, &created))
			var ex execResult
			mustOK(t, "exec", call(t, cs, "exec", map[string]any{"sandbox": created.ID, "command": "echo hi > /data/f && cat /data/f"}, &ex))
			if ex.Stdout != "hi\n" {
				t.Fatalf("exec on the volume: %+v", ex)
			}
			var list struct {
				Volumes []struct {
					Name     string `json:"name"`
					Attached []struct {
						Sandbox string `json:"sandbox"`
					} `json:"attached"`
				} `json:"volumes"`
			}
			mustOK(t, "volume_list", call(t, cs, "volume_list", map[string]any{}, &list))
			found := false
			for _, v := range list.Volumes {
				found = found || (v.Name == vol && len(v.Attached) == 1 && v.Attached[0].Sandbox == created.ID)
			}
			if !found {
				t.Fatalf("volume_list = %+v", list)
			}
			wantError(t, "delete while mounted", call(t, cs, "volume_delete", map[string]any{"name": vol}, nil), "mounted by sandbox")
			mustOK(t, "sandbox_delete", call(t, cs, "sandbox_delete", map[string]any{"sandbox": created.ID}, nil))
			mustOK(t, "volume_delete", call(t, cs, "volume_delete", map[string]any{"name": vol}, nil))
		})
	}
}
