//go:build linux

package kubetest

import (
	"fmt"
	"path/filepath"
)

// containerdConfig is containerd's config.toml: state under dir (network
// namespaces included), runc from Debian, the pod network from cniDir,
// images over plain HTTP from the local registry.
func containerdConfig(dir, sock, cniConf, registry, pause string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
# Plugins that would write outside the state directories or are not used.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.runtime.v1.linux",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  # This VM withholds CAP_SYS_RESOURCE even from root: without this, runc
  # fails every container on its oom_score_adj write ("can't get final
  # child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = %[6]q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[7]q
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors.%[8]q]
    endpoint = ["http://%[8]s"]
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", pause,
		filepath.Join(dir, "runc"), cniConf, registry)
}

// cniConfig is the pod network: the bridge plugin on our bridge, no
// gateway (pods reach only their subnet, where the node is), host-local
// addresses kept under dir.
func cniConfig(n *hostNet, ipamDir string) string {
	first := n.PodCIDR.Addr().Next().Next() // .1 is the node
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "paddock-kubetest",
  "plugins": [{
    "type": "bridge",
    "bridge": %q,
    "isGateway": false,
    "ipMasq": false,
    "ipam": {
      "type": "host-local",
      "dataDir": %q,
      "ranges": [[{"subnet": %q, "rangeStart": %q}]]
    }
  }]
}
`, n.Bridge, ipamDir, n.PodCIDR.String(), first.String())
}

// kubeletConfig is the KubeletConfiguration for this VM: cgroup v1 with
// the cgroupfs driver, everything under dir, thresholds low enough that a
// busy shared disk does not evict test pods.
func kubeletConfig(dir, caFile, certFile, keyFile, sock, cgroupRoot, resolv string, n *hostNet, port, healthz int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
tlsCertFile: %s
tlsPrivateKeyFile: %s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %s
authorization:
  mode: AlwaysAllow
cgroupDriver: cgroupfs
cgroupRoot: %s
failCgroupV1: false
containerRuntimeEndpoint: unix://%s
podLogsDir: %s
resolvConf: %s
podPidsLimit: %d
maxPods: 110
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
  imagefs.inodesFree: 1%%
mergeDefaultEvictionSettings: false
localStorageCapacityIsolation: true
failSwapOn: false
staticPodPath: ""
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
`, n.NodeIP, port, healthz, certFile, keyFile, caFile, cgroupRoot, sock, filepath.Join(dir, "pod-logs"), resolv,
		PodPidsLimit)
}

// registryConfig is docker-registry's config: loopback, filesystem storage.
func registryConfig(addr, root string) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, root, addr)
}

func joinFlags(kv ...string) []string {
	out := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, "--"+kv[i]+"="+kv[i+1])
	}
	return out
}
