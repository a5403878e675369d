//go:build linux

package kubetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Available reports why this machine cannot run the cluster, or nil.
func Available(binDir string) error {
	if binDir == "" {
		binDir = BinDir()
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root (kubelet, containerd, mounts, cgroups, a bridge)", ErrUnavailable)
	}
	var missing []string
	for _, b := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			missing = append(missing, filepath.Join(binDir, b)+" (run scripts/deps.sh kube, or tools/kube/build.sh: ~10 min cold)")
		}
	}
	for cmd, pkg := range map[string]string{"etcd": "etcd-server", "containerd": "containerd", "runc": "runc",
		"docker-registry": "docker-registry", "nft": "nftables", "busybox": "busybox-static"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd+" (apt-get install "+pkg+")")
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			missing = append(missing, "/usr/lib/cni/"+p+" (apt-get install containernetworking-plugins)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %s", ErrUnavailable, strings.Join(missing, ", "))
	}
	return nil
}
