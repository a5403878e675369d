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

// A sandbox with volumes: its template trees are no mounts of the spec
// (they are bound inside the root, under gVisor's root overlay), and each
// volume is a bind, read-only when asked, nosuid and nodev.
func TestBuildSpecVolumes(t *testing.T) {
	s := buildSpec(specParams{Rootfs: "/r", Hostname: "h", BinDir: "/b", CtlDir: "/c", Nested: true,
		Trees:   []subtree{{Path: "/usr", At: "/trees/0"}},
		Volumes: []volumeBind{{Name: "a", Path: "/data", At: "/vols/0"}, {Name: "b", Path: "/ro", At: "/vols/1", ReadOnly: true}}})
	byDest := map[string]ociMount{}
	for _, m := range s.Mounts {
		byDest[m.Destination] = m
	}
	if _, ok := byDest["/usr"]; ok {
		t.Errorf("a nested template tree is a mount of the spec: %+v", byDest["/usr"])
	}
	for dest, want := range map[string]struct {
		src string
		ro  bool
	}{"/data": {"/vols/0", false}, "/ro": {"/vols/1", true}} {
		m := byDest[dest]
		if m.Type != "bind" || m.Source != want.src || slices.Contains(m.Options, "ro") != want.ro ||
			!slices.Contains(m.Options, "nosuid") || !slices.Contains(m.Options, "nodev") {
			t.Errorf("volume at %s: %+v", dest, m)
		}
	}
}

// The descriptor limit is the recorded one; a record without one (made
// before it was recorded) gets the limit such sandboxes were made with,
// so that a restore presents the spec it was checkpointed with.
func TestSpecNoFile(t *testing.T) {
	for _, c := range []struct{ in, want uint64 }{{0, legacyNoFile}, {20000, 20000}} {
		s := buildSpec(specParams{Rootfs: "/r", NoFile: c.in})
		if len(s.Process.Rlimits) != 1 || s.Process.Rlimits[0].Type != "RLIMIT_NOFILE" ||
			s.Process.Rlimits[0].Hard != c.want || s.Process.Rlimits[0].Soft != c.want {
			t.Errorf("NoFile %d: rlimits %+v, want %d", c.in, s.Process.Rlimits, c.want)
		}
	}
}
