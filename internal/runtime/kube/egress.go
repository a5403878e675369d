package kube

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/paddockhq/paddock/internal/errs"
)

// Source is the sandbox behind a connection to Paddock's egress proxy or
// resolver.
type Source struct {
	Sandbox string
	Tenant  string // the label's value (a digest for long tenant ids; see the annotation)
	Pod     string
}

// SandboxForIP names the sandbox whose Pod has address ip, from the
// runtime's watch of its Pods: a running sandbox Pod of this installation,
// not being deleted, and one this process created or reattached. Any
// other address — a Pod that is not a sandbox, a terminating one, an
// address a Pod once had — is refused: the egress proxy then serves
// nothing (a forged request from a non-sandbox Pod gets no policy).
func (b *Backend) SandboxForIP(ip netip.Addr) (Source, error) {
	pods, err := b.pods.List(labels.SelectorFromSet(b.selector()))
	if err != nil {
		return Source{}, errs.Wrap(errs.CodeUnavailable, err, "cannot look up sandbox Pods")
	}
	for _, p := range pods {
		if !podHasIP(p, ip) {
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			break
		}
		id := p.Labels[LabelSandbox]
		b.mu.Lock()
		inst := b.live[id]
		b.mu.Unlock()
		if inst == nil || inst.uid != p.UID {
			break
		}
		return Source{Sandbox: id, Tenant: p.Labels[LabelTenant], Pod: p.Name}, nil
	}
	return Source{}, errs.New(errs.CodeForbidden, "%s is not the address of a running sandbox", ip)
}

func podHasIP(p *corev1.Pod, ip netip.Addr) bool {
	for _, a := range p.Status.PodIPs {
		if pa, err := netip.ParseAddr(a.IP); err == nil && pa.Unmap() == ip.Unmap() {
			return true
		}
	}
	pa, err := netip.ParseAddr(p.Status.PodIP)
	return err == nil && pa.Unmap() == ip.Unmap()
}
