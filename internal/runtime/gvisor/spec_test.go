package gvisor

import (
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
)

func TestBuildSpec(t *testing.T) {
	s := buildSpec(specParams{Rootfs: "/r", Hostname: "h", BinDir: "/bin-dir", CtlDir: "/ctl", CgroupsPath: "/p/id",
		ShmBytes: 1 << 20, Trees: []subtree{{Path: "/usr", At: "/trees/0"}}})
	if s.Process.Args[0] != "paddock-guest" || s.Process.Args[1] != guestapi.GVisorArg || s.Process.User.UID != 0 {
		t.Fatalf("process: %+v", s.Process)
	}
	if slices.Contains(s.Process.Capabilities.Bounding, "CAP_SYS_PTRACE") || slices.Contains(s.Process.Capabilities.Bounding, "CAP_NET_RAW") {
		t.Fatalf("the agent starts with capabilities it never needs: %v", s.Process.Capabilities.Bounding)
	}
	byDest := map[string]ociMount{}
	for _, m := range s.Mounts {
		byDest[m.Destination] = m
	}
	// The agent's directories are read-only, so gVisor puts no writable
	// overlay over them; the template's trees get one.
	for _, d := range []string{guestapi.GVisorBinDir, guestapi.GVisorCtlDir} {
		if !slices.Contains(byDest[d].Options, "ro") {
			t.Errorf("%s is not read-only: %+v", d, byDest[d])
		}
	}
	if m := byDest["/usr"]; m.Source != "/trees/0" || slices.Contains(m.Options, "ro") {
		t.Errorf("template tree: %+v", m)
	}
	if s.Root.Path != "/r" || s.Root.Readonly || s.Linux.CgroupsPath != "/p/id" || s.Hostname != "h" {
		t.Errorf("spec: root %+v cgroups %q hostname %q", s.Root, s.Linux.CgroupsPath, s.Hostname)
	}
	if byDest["/dev/shm"].Options[len(byDest["/dev/shm"].Options)-1] != "size=1048576" {
		t.Errorf("shm: %+v", byDest["/dev/shm"])
	}
	var netns string
	for _, n := range s.Linux.Namespaces {
		if n.Type == "network" {
			netns = n.Path
		}
	}
	if netns != "" {
		t.Errorf("a sandbox without network joins %q", netns)
	}
}
