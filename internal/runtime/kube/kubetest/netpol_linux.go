//go:build linux

package kubetest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// enforcer keeps the node's nftables tables in step with the cluster's
// Pods, Namespaces and NetworkPolicies (see netpol.go).
type enforcer struct {
	net     *hostNet
	log     *slog.Logger
	factory informers.SharedInformerFactory
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	applied string
	applies int
	warned  map[string]bool
	lastErr error
}

func startEnforcer(cs kubernetes.Interface, n *hostNet, log *slog.Logger) (*enforcer, error) {
	e := &enforcer{net: n, log: log, factory: informers.NewSharedInformerFactory(cs, 0),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), warned: map[string]bool{}}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { e.poke() },
		UpdateFunc: func(any, any) { e.poke() },
		DeleteFunc: func(any) { e.poke() },
	}
	for _, inf := range []cache.SharedIndexInformer{
		e.factory.Core().V1().Pods().Informer(),
		e.factory.Core().V1().Namespaces().Informer(),
		e.factory.Networking().V1().NetworkPolicies().Informer(),
	} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return nil, err
		}
	}
	e.factory.Start(e.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for typ, ok := range e.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			close(e.stop)
			return nil, fmt.Errorf("network policy plugin: %v informer did not sync", typ)
		}
	}
	go e.loop()
	e.poke()
	return e, nil
}

func (e *enforcer) poke() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

func (e *enforcer) loop() {
	defer close(e.done)
	for {
		select {
		case <-e.stop:
			return
		case <-e.kick:
		}
		if err := e.sync(); err != nil {
			e.log.Error("network policy plugin: cannot apply rules", "err", err)
		}
	}
}

func (e *enforcer) sync() error {
	pods, err := e.factory.Core().V1().Pods().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	nss, err := e.factory.Core().V1().Namespaces().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	pols, err := e.factory.Networking().V1().NetworkPolicies().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	m := buildModel(pods, nss, pols, e.net.PodCIDR)
	rs := renderRuleset(e.net, m)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range m.Warnings {
		if !e.warned[w] {
			e.warned[w] = true
			e.log.Warn("network policy plugin: not enforced", "what", w)
		}
	}
	if rs == e.applied {
		return nil
	}
	if err := e.net.apply(rs); err != nil {
		e.lastErr = err
		return err
	}
	e.applied, e.lastErr = rs, nil
	e.applies++
	return nil
}

// Ruleset returns the rules in force.
func (e *enforcer) ruleset() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.applied
}

func (e *enforcer) close() {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	<-e.done
	e.factory.Shutdown()
}
