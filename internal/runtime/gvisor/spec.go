package gvisor

import (
	"sort"
	"strconv"

	"github.com/paddockhq/paddock/internal/guestapi"
)

// The OCI runtime spec, as much of it as this backend writes (field names
// and meaning from github.com/opencontainers/runtime-spec; a local copy of
// a dozen fields rather than a dependency).

type ociSpec struct {
	Version  string      `json:"ociVersion"`
	Process  *ociProcess `json:"process"`
	Root     *ociRoot    `json:"root"`
	Hostname string      `json:"hostname,omitempty"`
	Mounts   []ociMount  `json:"mounts"`
	Linux    *ociLinux   `json:"linux"`
}

type ociProcess struct {
	Args         []string    `json:"args"`
	Env          []string    `json:"env"`
	Cwd          string      `json:"cwd"`
	User         ociUser     `json:"user"`
	Capabilities *ociCaps    `json:"capabilities,omitempty"`
	Rlimits      []ociRlimit `json:"rlimits,omitempty"`
}

type ociUser struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

type ociCaps struct {
	Bounding    []string `json:"bounding"`
	Effective   []string `json:"effective"`
	Permitted   []string `json:"permitted"`
	Inheritable []string `json:"inheritable,omitempty"`
}

type ociRlimit struct {
	Type string `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

type ociRoot struct {
	Path     string `json:"path"`
	Readonly bool   `json:"readonly,omitempty"`
}

type ociMount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type,omitempty"`
	Source      string   `json:"source,omitempty"`
	Options     []string `json:"options,omitempty"`
}

type ociLinux struct {
	Namespaces  []ociNamespace `json:"namespaces"`
	CgroupsPath string         `json:"cgroupsPath,omitempty"`
}

type ociNamespace struct {
	Type string `json:"type"`
	Path string `json:"path,omitempty"`
}

// agentCaps is what the agent starts with inside gVisor: what it keeps
// for itself (guest.keepCaps), plus what its setup needs once (mounting its
// pids controller and hiding its directory). It drops the rest of these
// before serving, and workloads get none.
var agentCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_SYS_ADMIN", "CAP_SYS_RESOURCE",
}

type subtree struct {
	Path   string // inside the sandbox
	Source string // on the host
	At     string // where it is bound, for the spec
}

// specParams are one sandbox's variable parts of its spec.
// legacyNoFile is the descriptor limit every gVisor sandbox had before the
// limit was recorded with it: a restore of such a sandbox presents it.
const legacyNoFile = 1 << 20

type specParams struct {
	Rootfs      string // the merged root filesystem on the host
	Hostname    string
	BinDir      string // host directory holding the agent binary
	CtlDir      string // host directory for the boot file and socket
	NetNS       string // network namespace path; "" for a new one (loopback only)
	CgroupsPath string // relative to each hierarchy's root
	ShmBytes    int64
	NoFile      uint64    // RLIMIT_NOFILE of the agent; 0: legacyNoFile
	Trees       []subtree // the template's other trees, bound read-only on the host
	// Nested: the trees are bound inside Rootfs on the host (a sandbox
	// with volumes), not mounts of the spec.
	Nested  bool
	Volumes []volumeBind
}

// volumeBind is one volume of a sandbox: the host directory At (a bind of
// the volume's data directory made in runsc's mount namespace) at Path.
type volumeBind struct {
	Name     string
	Path     string // inside the sandbox
	Source   string // the volume's data directory on the host
	At       string // where it is bound, for the spec
	ReadOnly bool
}

// buildSpec returns the OCI spec of a sandbox: the agent as its only
// process, the template tree (with the writable layer, merged on the
// host) as its root, and the agent's two directories bind-mounted
// read-only under guestapi.GVisorDir.
func buildSpec(p specParams) *ociSpec {
	nofile := p.NoFile
	if nofile == 0 {
		nofile = legacyNoFile
	}
	caps := append([]string(nil), agentCaps...)
	sort.Strings(caps)
	ns := []ociNamespace{{Type: "pid"}, {Type: "ipc"}, {Type: "uts"}, {Type: "mount"}, {Type: "network", Path: p.NetNS}}
	shm := shmOption(p.ShmBytes)
	s := &ociSpec{
		Version: "1.0.2",
		Process: &ociProcess{
			// Found on PATH: argv[0] stays "paddock-guest", which is how the
			// paddock binary (the fallback when no guest is embedded)
			// knows to run as the agent.
			Args: []string{"paddock-guest", guestapi.GVisorArg},
			Env: []string{"PATH=" + guestapi.GVisorBinDir, "GOMAXPROCS=2", "GOTRACEBACK=none", "GOGC=50",
				"HOME=/root"},
			Cwd:          "/",
			User:         ociUser{UID: 0, GID: 0},
			Capabilities: &ociCaps{Bounding: caps, Effective: caps, Permitted: caps},
			Rlimits:      []ociRlimit{{Type: "RLIMIT_NOFILE", Hard: nofile, Soft: nofile}},
		},
		Root:     &ociRoot{Path: p.Rootfs},
		Hostname: p.Hostname,
		Mounts: []ociMount{
			{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", shm}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: guestapi.GVisorBinDir, Type: "bind", Source: p.BinDir, Options: []string{"rbind", "ro", "nosuid", "nodev"}},
			{Destination: guestapi.GVisorCtlDir, Type: "bind", Source: p.CtlDir, Options: []string{"rbind", "ro", "nosuid", "nodev", "noexec"}},
		},
		Linux: &ociLinux{Namespaces: ns, CgroupsPath: p.CgroupsPath},
	}
	for _, v := range p.Volumes {
		// No overlay over a volume (only the root is overlaid when there
		// are volumes): writes go to the volume's ext4 image, whose size
		// is the quota. "ro" makes gVisor refuse writes too; the host
		// side of a read-only volume is a read-only bind besides.
		o := []string{"bind", "nosuid", "nodev"}
		if v.ReadOnly {
			o = append(o, "ro")
		}
		s.Mounts = append(s.Mounts, ociMount{Destination: v.Path, Type: "bind", Source: v.At, Options: o})
	}
	if p.Nested {
		return s
	}
	for _, t := range p.Trees {
		// Not "ro" in the spec: gVisor puts an overlay (with the sandbox's
		// writable upper) only over mounts it may write; the host side of
		// the bind is read-only.
		s.Mounts = append(s.Mounts, ociMount{Destination: t.Path, Type: "bind", Source: t.At,
			Options: []string{"rbind", "nosuid", "nodev"}})
	}
	return s
}

func shmOption(n int64) string {
	if n <= 0 {
		n = 64 << 20
	}
	return "size=" + strconv.FormatInt(n, 10)
}
