package guestapi

import "context"

// The guest in a Kubernetes Pod (the kube runtime). There is no setup
// socket and no Unix listener there: an init container (the guest image,
// `paddock-guest pod-init`) copies the guest binary into an emptyDir and
// the sandbox's PodConfig and TLS credentials — from a Secret mounted into
// the init container only — into a memory-backed emptyDir, readable by no
// workload uid. The guest (`paddock-guest pod`) runs as PID 1 of the
// sandbox container, reads and deletes them, hardens itself as in a
// native sandbox (what a container allows), and serves this same protocol
// on TCP port PodPort with mutual TLS: its certificate names the sandbox
// (PodServerName), the host's names PodClientName, both issued by the
// runtime's own CA, which the guest and the host alone trust.

// PodPort is the guest's TLS port in the Pod.
const PodPort = 7443

// Files the init container hands over to the guest.
const (
	PodConfigFile = "config.json"
	PodCertFile   = "tls.crt"
	PodKeyFile    = "tls.key"
	PodCAFile     = "ca.crt"
)

// PodClientName is the common name of the host's client certificate.
const PodClientName = "paddock-host"

// PodServerName is the DNS name in the certificate of sandbox id's guest:
// the host checks it, so a Pod that got another sandbox's IP cannot pass
// for it.
func PodServerName(id string) string { return id + ".guest.paddock.internal" }

// PodConfig is the Pod guest's part of Config.
type PodConfig struct {
	Version  int    `json:"version"`
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
	// Env is the sandbox-wide environment, under each exec's own.
	Env map[string]string `json:"env,omitempty"`
	// ExtraFiles are written before hardening (e.g. a CA bundle).
	ExtraFiles map[string]string `json:"extra_files,omitempty"`
}

// PodStats is the answer of RoutePodStats: the container's cgroup as
// the guest reads it (-1 where the host does not show a counter).
type PodStats struct {
	MemoryBytes     int64 `json:"memory_bytes"`
	MemoryPeakBytes int64 `json:"memory_peak_bytes"`
	OOMKills        int64 `json:"oom_kills"`
	Pids            int64 `json:"pids"`
	CPUUsageNs      int64 `json:"cpu_usage_ns"`
	CPUThrottledNs  int64 `json:"cpu_throttled_ns"`
}

// PodStats reads a Pod agent's container cgroup counters.
func (c *Client) PodStats(ctx context.Context) (PodStats, error) {
	var ps PodStats
	err := c.unary(ctx, RoutePodStats, Empty{}, &ps)
	return ps, err
}
