package kube

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"

	"github.com/paddockhq/paddock/internal/template"
)

// Options configure the kube runtime.
type Options struct {
	// Config reaches the cluster (a kubeconfig's, or in-cluster).
	Config *rest.Config
	// Namespace holds the sandboxes' Pods, Secrets and NetworkPolicy.
	Namespace string
	// Instance tells apart Paddock installations sharing a namespace
	// (label paddock.dev/instance); default "default".
	Instance string
	// GuestImage is the image holding /paddock-guest (PushGuestImage).
	GuestImage string
	// Image maps a template to the image its sandboxes run.
	Image func(*template.Template) (string, error)
	// RuntimeClass names the RuntimeClass of every sandbox Pod ("": the
	// cluster's default).
	RuntimeClass string
	// PullPolicy of the sandbox and init containers; default IfNotPresent.
	PullPolicy corev1.PullPolicy
	// CPURequest and MemoryRequest are what each sandbox Pod requests
	// (its limits are the sandbox's); capped at the limits. Defaults 10m
	// and 32Mi: sandboxes are mostly idle, and the scheduler should not
	// refuse the twentieth on a small node.
	CPURequest, MemoryRequest resource.Quantity
	// UserNamespaces runs sandbox Pods with hostUsers: false (a cluster
	// with user-namespace support: Kubernetes ≥ 1.33 and containerd ≥ 2).
	UserNamespaces bool
	// Ingress are the peers allowed to reach the guests' port besides the
	// node itself (Paddock's server Pods when it runs in the cluster).
	Ingress []networkingv1.NetworkPolicyPeer
	// Egress are the only destinations sandbox Pods may open connections
	// to (Paddock's egress proxy and resolver Service); none: no egress.
	Egress []networkingv1.NetworkPolicyEgressRule
	// DNS, when set, is the sandboxes' resolver configuration (dnsPolicy
	// None); nil: the node's (dnsPolicy Default).
	DNS *corev1.PodDNSConfig
	// ReadyTimeout bounds how long a Pod may take to run its guest.
	ReadyTimeout time.Duration
	Log          *slog.Logger
}

var labelValueRE = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

func (o *Options) fill() error {
	if o.Config == nil {
		return errors.New("kube: no cluster configuration (--kubeconfig, or run in the cluster)")
	}
	if !dnsLabelRE.MatchString(o.Namespace) {
		return fmt.Errorf("kube: namespace %q is not a valid name", o.Namespace)
	}
	if o.Instance == "" {
		o.Instance = "default"
	}
	if len(o.Instance) > 40 || !labelValueRE.MatchString(o.Instance) {
		return fmt.Errorf("kube: instance %q is not a valid label value of at most 40 characters", o.Instance)
	}
	if o.GuestImage == "" {
		return errors.New("kube: no guest image (PushGuestImage makes one from the embedded guest)")
	}
	if o.Image == nil {
		return errors.New("kube: no template-to-image mapping")
	}
	if o.PullPolicy == "" {
		o.PullPolicy = corev1.PullIfNotPresent
	}
	if o.CPURequest.IsZero() {
		o.CPURequest = resource.MustParse("10m")
	}
	if o.MemoryRequest.IsZero() {
		o.MemoryRequest = resource.MustParse("32Mi")
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// dnsLabelRE is an RFC 1123 label: Pod, Secret and namespace names.
var dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
