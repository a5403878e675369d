// Package kubetest runs a real single-node Kubernetes cluster for tests:
// Debian's etcd, kube-apiserver, kube-scheduler, kube-controller-manager
// and kubelet built by tools/kube/build.sh, Debian's containerd and runc,
// the CNI bridge plugin on a bridge of its own, a local docker-registry
// holding a pause and a busybox image, and a NetworkPolicy enforcer on
// nftables (netpol.go: nothing else can enforce policy on this cluster).
//
// A test package calls Main from TestMain and Get from the tests that need
// the cluster: it is started once, on first use, and torn down completely
// when the tests end — processes by pid, mounts, cgroups, bridge, nftables
// tables and the fixed paths kubelet and containerd write whatever they
// are told. A janitor process cleans up if the test binary dies first
// (a panic, a timeout, SIGKILL), and the next Start removes what a
// janitor could not. Clusters are serialized host-wide by a lock.
package kubetest
