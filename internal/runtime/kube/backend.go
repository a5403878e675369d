package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Backend is the kube runtime.
type Backend struct {
	o    Options
	cs   kubernetes.Interface
	id   *identity
	pods corelisters.PodNamespaceLister
	stop chan struct{}
	fac  informers.SharedInformerFactory

	mu   sync.Mutex
	live map[string]*instance
	// waiters are Creates watching their Pod come up.
	waiters map[string]chan struct{}
}

// record is what the manager persists for a sandbox: the Pod's identity.
type record struct {
	Pod string    `json:"pod"`
	UID types.UID `json:"uid"`
}

var _ runtime.Backend = (*Backend)(nil)

// New connects to the cluster, checks the rights the runtime needs, loads
// (or makes) its CA and ensures the sandboxes' NetworkPolicy. Errors name
// what is wrong: an unreachable API, refused credentials, a missing verb.
func New(ctx context.Context, o Options) (*Backend, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	b := &Backend{o: o, cs: cs, stop: make(chan struct{}), live: map[string]*instance{}, waiters: map[string]chan struct{}{}}
	if err := b.checkAccess(ctx); err != nil {
		return nil, err
	}
	caLabels := map[string]string{LabelManagedBy: managedBy, LabelComponent: componentCA, LabelInstance: o.Instance}
	if b.id, err = loadIdentity(ctx, cs, o.Namespace, "paddock-guest-ca-"+o.Instance, caLabels); err != nil {
		return nil, err
	}
	if err := b.ensurePolicy(ctx); err != nil {
		return nil, err
	}
	sel := labels.SelectorFromSet(b.selector()).String()
	b.fac = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(o.Namespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = sel }))
	inf := b.fac.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { b.observe(obj, false) },
		UpdateFunc: func(_, obj any) { b.observe(obj, false) },
		DeleteFunc: func(obj any) { b.observe(obj, true) },
	}); err != nil {
		return nil, err
	}
	b.pods = b.fac.Core().V1().Pods().Lister().Pods(o.Namespace)
	b.fac.Start(b.stop)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, ok := range b.fac.WaitForCacheSync(sctx.Done()) {
		if !ok {
			close(b.stop)
			return nil, errs.New(errs.CodeUnavailable, "kube: cannot watch Pods in namespace %s", o.Namespace)
		}
	}
	return b, nil
}

// Name implements runtime.Backend.
func (b *Backend) Name() string { return "kube" }

// Close stops watching; sandboxes keep running (Reattach finds them).
func (b *Backend) Close() error {
	select {
	case <-b.stop:
	default:
		close(b.stop)
		b.fac.Shutdown()
	}
	b.mu.Lock()
	for _, inst := range b.live {
		inst.guest.Close()
	}
	b.mu.Unlock()
	return nil
}

// observe routes a Pod event to its instance or its waiting Create.
func (b *Backend) observe(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = t.Obj, true
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	id := p.Labels[LabelSandbox]
	b.mu.Lock()
	inst := b.live[id]
	w := b.waiters[id]
	b.mu.Unlock()
	if w != nil {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	if inst == nil || p.UID != inst.uid {
		return
	}
	if deleted {
		inst.end("the sandbox's Pod was deleted")
		return
	}
	if st := readPodState(p); st.failed != "" {
		inst.end(st.failed)
	}
}

// Create implements runtime.Backend: a Secret with the guest's
// credentials, the Pod, then a wait for the guest to answer. On failure
// both are deleted and the error carries the cluster's reason.
func (b *Backend) Create(ctx context.Context, cfg runtime.Config) (_ runtime.Instance, err error) {
	if !dnsLabelRE.MatchString(cfg.ID) || len(cfg.ID) > 57 {
		return nil, errs.Invalid("invalid sandbox id")
	}
	if cfg.Network.Networked() {
		return nil, errs.New(errs.CodeUnsupported, "the kube runtime gives sandboxes no network yet (egress through the in-cluster proxy is not wired)")
	}
	if cfg.Template == nil {
		return nil, errs.Invalid("no template")
	}
	image, err := b.o.Image(cfg.Template)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := b.id.guestCert(cfg.ID)
	if err != nil {
		return nil, fmt.Errorf("kube: guest certificate: %w", err)
	}
	sec, err := b.guestSecret(cfg, certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	wake := make(chan struct{}, 1)
	b.mu.Lock()
	b.waiters[cfg.ID] = wake
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiters, cfg.ID)
		b.mu.Unlock()
	}()
	ns := b.o.Namespace
	if _, err := b.cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		return nil, apiErr(ns, "create", "secrets", err)
	}
	var pod *corev1.Pod
	defer func() {
		if err == nil {
			return
		}
		cctx := context.WithoutCancel(ctx)
		if pod == nil { // a Pod of that name, if any, is not ours
			_ = b.cs.CoreV1().Secrets(ns).Delete(cctx, secretName(cfg.ID), metav1.DeleteOptions{})
			return
		}
		if derr := b.deleteObjects(cctx, cfg.ID, pod.UID); derr != nil {
			b.o.Log.Warn("kube: cannot delete a sandbox that failed to start", "sandbox", cfg.ID, "err", derr)
		}
	}()
	pod, err = b.cs.CoreV1().Pods(ns).Create(ctx, b.podSpec(cfg, image), metav1.CreateOptions{})
	if err != nil {
		return nil, apiErr(ns, "create", "pods", err)
	}
	// The Secret goes with its Pod, also when Paddock is not there to
	// delete it (the garbage collector follows the owner reference).
	ownerDone := make(chan error, 1)
	go func() { ownerDone <- b.ownSecret(ctx, cfg.ID, pod) }()
	inst := b.newInstance(cfg.ID, pod.UID)
	if err := b.waitRunning(ctx, inst, wake); err != nil {
		return nil, err
	}
	if err := <-ownerDone; err != nil {
		b.o.Log.Warn("kube: the guest secret has no owner; it is deleted with the sandbox only", "sandbox", cfg.ID, "err", err)
	}
	b.mu.Lock()
	b.live[cfg.ID] = inst
	b.mu.Unlock()
	b.recheck(inst) // an event between the wait and the registration
	return inst, nil
}

func (b *Backend) ownSecret(ctx context.Context, id string, pod *corev1.Pod) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}}})
	_, err := b.cs.CoreV1().Secrets(b.o.Namespace).Patch(ctx, secretName(id), types.MergePatchType, patch, metav1.PatchOptions{})
	return apiErr(b.o.Namespace, "patch", "secrets", err)
}

// waitRunning waits until inst's Pod runs its guest and the guest answers
// over mutual TLS, or the Pod fails (the cluster's reason), or the timeout
// passes (what the Pod was still waiting for, and its last warning).
func (b *Backend) waitRunning(ctx context.Context, inst *instance, wake chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, b.o.ReadyTimeout)
	defer cancel()
	progress := "not yet seen"
	tick := time.NewTicker(250 * time.Millisecond) // the watch may lag; poll the cache too
	defer tick.Stop()
	for {
		if p, err := b.pods.Get(inst.id); err == nil && p.UID == inst.uid {
			st := readPodState(p)
			if st.failed != "" {
				return errs.New(errs.CodeUnavailable, "sandbox failed to start: %s", st.failed)
			}
			progress = st.progress
			if st.running {
				inst.setAddr(st.ip)
				if err := inst.ping(ctx); err == nil {
					return nil
				} else if ctx.Err() == nil {
					progress = "the guest does not answer yet: " + errs.Public(err)
					select {
					case <-time.After(20 * time.Millisecond):
					case <-ctx.Done():
					}
					continue
				}
			}
		}
		select {
		case <-wake:
		case <-tick.C:
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return errs.New(errs.CodeTimeout, "sandbox did not start within %v: %s%s", b.o.ReadyTimeout, progress, b.lastWarning(inst))
			}
			return ctx.Err()
		}
	}
}

// lastWarning is the Pod's latest Warning event (a CNI or mount failure
// shows only there), formatted for an error message.
func (b *Backend) lastWarning(inst *instance) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	evs, err := b.cs.CoreV1().Events(b.o.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(inst.uid) + ",type=Warning"})
	if err != nil || len(evs.Items) == 0 {
		return ""
	}
	last := evs.Items[0]
	for _, e := range evs.Items[1:] {
		if e.LastTimestamp.After(last.LastTimestamp.Time) {
			last = e
		}
	}
	return clip("; last warning: " + last.Reason + ": " + last.Message)
}

// recheck ends inst if its Pod already failed or vanished.
func (b *Backend) recheck(inst *instance) {
	p, err := b.pods.Get(inst.id)
	switch {
	case apierrors.IsNotFound(err):
		inst.end("the sandbox's Pod was deleted")
	case err == nil && p.UID != inst.uid:
		inst.end("the sandbox's Pod was replaced")
	case err == nil:
		if st := readPodState(p); st.failed != "" {
			inst.end(st.failed)
		}
	}
}

// Destroy implements runtime.Backend: the Pod and its Secret are deleted;
// the kubelet stops the containers after (at least two seconds' grace:
// the agent ignores SIGTERM, as PID 1 of every sandbox does).
func (b *Backend) Destroy(ctx context.Context, ri runtime.Instance) error {
	inst, ok := ri.(*instance)
	if !ok {
		return errors.New("kube: foreign instance")
	}
	inst.destroying.Store(true)
	b.mu.Lock()
	if b.live[inst.id] == inst {
		delete(b.live, inst.id)
	}
	b.mu.Unlock()
	inst.end("destroyed")
	inst.guest.Close()
	return b.deleteObjects(ctx, inst.id, inst.uid)
}

// deleteObjects deletes sandbox id's Pod (only if it is the one with uid,
// when uid is set) and its Secret.
func (b *Backend) deleteObjects(ctx context.Context, id string, uid types.UID) error {
	ns := b.o.Namespace
	opts := metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	perr := b.cs.CoreV1().Pods(ns).Delete(ctx, id, opts)
	if apierrors.IsNotFound(perr) || apierrors.IsConflict(perr) {
		perr = nil // gone, or another sandbox's Pod by now
	}
	serr := b.cs.CoreV1().Secrets(ns).Delete(ctx, secretName(id), metav1.DeleteOptions{})
	if apierrors.IsNotFound(serr) {
		serr = nil
	}
	return errors.Join(apiErr(ns, "delete", "pods", perr), apiErr(ns, "delete", "secrets", serr))
}

// Reattach implements runtime.Backend: the Pod must exist with the
// recorded UID, run, and its guest must answer.
func (b *Backend) Reattach(ctx context.Context, id string, raw json.RawMessage) (runtime.Instance, error) {
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Pod != id || rec.UID == "" {
		return nil, fmt.Errorf("kube: bad record for %s", id)
	}
	p, err := b.cs.CoreV1().Pods(b.o.Namespace).Get(ctx, id, metav1.GetOptions{})
	if err != nil {
		return nil, apiErr(b.o.Namespace, "get", "pods", err)
	}
	if p.UID != rec.UID || p.Labels[LabelInstance] != b.o.Instance {
		return nil, fmt.Errorf("kube: the Pod of %s is not the one recorded", id)
	}
	st := readPodState(p)
	if st.failed != "" || !st.running {
		return nil, fmt.Errorf("kube: the Pod of %s is not running: %s%s", id, st.failed, st.progress)
	}
	inst := b.newInstance(id, p.UID)
	inst.setAddr(st.ip)
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := inst.ping(hctx); err != nil {
		inst.guest.Close()
		return nil, fmt.Errorf("kube: guest of %s does not answer: %w", id, err)
	}
	b.mu.Lock()
	b.live[id] = inst
	b.mu.Unlock()
	b.recheck(inst)
	return inst, nil
}

// Cleanup implements runtime.Backend.
func (b *Backend) Cleanup(ctx context.Context, id string, raw json.RawMessage) error {
	if !dnsLabelRE.MatchString(id) {
		return errs.Invalid("invalid sandbox id")
	}
	var rec record
	_ = json.Unmarshal(raw, &rec)
	return b.deleteObjects(ctx, id, rec.UID)
}

// Sweep implements runtime.Backend: Pods and Secrets of this installation
// whose sandbox is neither kept nor live are deleted.
func (b *Backend) Sweep(ctx context.Context, keep map[string]bool) (int, error) {
	ns := b.o.Namespace
	sel := labels.SelectorFromSet(b.selector()).String()
	found := map[string]bool{}
	pods, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return 0, apiErr(ns, "list", "pods", err)
	}
	for _, p := range pods.Items {
		found[p.Labels[LabelSandbox]] = true
	}
	secs, err := b.cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return 0, apiErr(ns, "list", "secrets", err)
	}
	for _, s := range secs.Items {
		found[s.Labels[LabelSandbox]] = true
	}
	n := 0
	var errsSeen []error
	for id := range found {
		b.mu.Lock()
		_, live := b.live[id]
		_, starting := b.waiters[id]
		b.mu.Unlock()
		if id == "" || keep[id] || live || starting {
			continue
		}
		b.o.Log.Info("kube: sweeping the Pod of an unknown sandbox", "sandbox", id)
		if err := b.deleteObjects(ctx, id, ""); err != nil {
			errsSeen = append(errsSeen, err)
			continue
		}
		n++
	}
	return n, errors.Join(errsSeen...)
}

// ensurePolicy creates or updates the sandboxes' NetworkPolicy.
func (b *Backend) ensurePolicy(ctx context.Context) error {
	ns := b.o.Namespace
	want := b.networkPolicy()
	api := b.cs.NetworkingV1().NetworkPolicies(ns)
	cur, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return apiErr(ns, "create", "networkpolicies", err)
	}
	if err != nil {
		return apiErr(ns, "get", "networkpolicies", err)
	}
	cur.Spec, cur.Labels = want.Spec, want.Labels
	_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	return apiErr(ns, "update", "networkpolicies", err)
}

func (b *Backend) guestAddr(ip string) string {
	return net.JoinHostPort(ip, strconv.Itoa(guestapi.PodPort))
}
