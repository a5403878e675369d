package kube

import (
	"context"
	"encoding/json"

	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
)

// instance is one sandbox Pod.
type instance struct {
	b   *Backend
	id  string
	uid types.UID

	mu    sync.Mutex
	ip    string
	guest *guestapi.Client

	done       chan struct{}
	endOnce    sync.Once
	reason     atomic.Pointer[string]
	destroying atomic.Bool
}

var (
	_ runtime.Instance     = (*instance)(nil)
	_ runtime.ExitReasoner = (*instance)(nil)
)

func (b *Backend) newInstance(id string, uid types.UID) *instance {
	return &instance{b: b, id: id, uid: uid, done: make(chan struct{}),
		guest: guestapi.NewTLSClient("0.0.0.0:0", b.id.clientTLS(id))}
}

// setAddr points the guest client at the Pod's address.
func (i *instance) setAddr(ip string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if ip == i.ip {
		return
	}
	i.guest.Close()
	i.ip = ip
	i.guest = guestapi.NewTLSClient(i.b.guestAddr(ip), i.b.id.clientTLS(i.id))
}

func (i *instance) ping(ctx context.Context) error {
	h, err := i.Guest().Health(ctx)
	if err != nil {
		return err
	}
	if h.Version != guestapi.Version {
		return errs.New(errs.CodeUnavailable, "the sandbox's agent speaks protocol %d, want %d", h.Version, guestapi.Version)
	}
	return nil
}

// end closes Done with reason (the first reason wins).
func (i *instance) end(reason string) {
	i.endOnce.Do(func() {
		i.reason.Store(&reason)
		close(i.done)
	})
}

func (i *instance) ID() string { return i.id }

func (i *instance) Guest() *guestapi.Client {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.guest
}

func (i *instance) Record() json.RawMessage {
	b, _ := json.Marshal(record{Pod: i.id, UID: i.uid})
	return b
}

func (i *instance) Done() <-chan struct{} { return i.done }

// ExitReason implements runtime.ExitReasoner.
func (i *instance) ExitReason() string {
	if r := i.reason.Load(); r != nil && !i.destroying.Load() {
		return *r
	}
	return ""
}

// IP is the Pod's address.
func (i *instance) IP() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.ip
}

// SetLimits resizes the Pod in place (CPU and memory; the kubelet applies
// it without a restart). Pids are the node's podPidsLimit and disk the
// ephemeral-storage limit set at creation: neither changes on a live Pod.
func (i *instance) SetLimits(l runtime.Limits) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := i.b.o.Namespace
	p, err := i.b.cs.CoreV1().Pods(ns).Get(ctx, i.id, metav1.GetOptions{})
	if err != nil {
		return apiErr(ns, "get", "pods", err)
	}
	if p.UID != i.uid {
		return errs.New(errs.CodeSandboxNotActive, "the sandbox's Pod is gone")
	}
	for k := range p.Spec.Containers {
		c := &p.Spec.Containers[k]
		if c.Name != containerName {
			continue
		}
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		if l.CPU > 0 {
			cpu := resource.NewMilliQuantity(int64(l.CPU*1000+0.5), resource.DecimalSI)
			c.Resources.Limits[corev1.ResourceCPU] = *cpu
			c.Resources.Requests[corev1.ResourceCPU] = minQ(i.b.o.CPURequest, *cpu)
		}
		if l.MemoryBytes > 0 {
			mem := resource.NewQuantity(l.MemoryBytes, resource.BinarySI)
			c.Resources.Limits[corev1.ResourceMemory] = *mem
			c.Resources.Requests[corev1.ResourceMemory] = minQ(i.b.o.MemoryRequest, *mem)
		}
	}
	if _, err := i.b.cs.CoreV1().Pods(ns).UpdateResize(ctx, i.id, p, metav1.UpdateOptions{}); err != nil {
		return apiErr(ns, "update", "pods/resize", err)
	}
	return nil
}

// Stats reads the container's cgroup through the guest.
func (i *instance) Stats() (runtime.Stats, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, err := i.Guest().PodStats(ctx)
	if err != nil {
		return runtime.Stats{}, err
	}
	st := runtime.Stats{MemoryBytes: ps.MemoryBytes, MemoryPeakBytes: ps.MemoryPeakBytes, OOMKills: ps.OOMKills,
		Pids: ps.Pids, CPUUsage: time.Duration(ps.CPUUsageNs), CPUThrottled: time.Duration(ps.CPUThrottledNs)}
	if h, err := i.Guest().Health(ctx); err == nil {
		st.DiskBytes, st.DiskInodes = h.DiskBytes, h.DiskInodes
	}
	return st, nil
}
