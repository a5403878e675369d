package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Labels and annotations on every object the runtime makes.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelComponent = "app.kubernetes.io/component"
	LabelInstance  = "paddock.dev/instance"
	LabelSandbox   = "paddock.dev/sandbox"
	LabelTenant    = "paddock.dev/tenant"
	// AnnotationTenant holds the tenant id verbatim (a label value must
	// be short and plain; LabelTenant then carries a digest).
	AnnotationTenant = "paddock.dev/tenant"

	managedBy        = "paddock"
	componentSandbox = "sandbox"
	componentCA      = "guest-ca"
	containerName    = "sandbox"
	initName         = "paddock-init"
)

// Paths inside the Pod.
const (
	secretMount = "/.paddock/secret" // init container only
	binMount    = "/.paddock/bin"
	credsMount  = "/.paddock/creds"
	guestPath   = binMount + "/paddock-guest"
)

// podCaps are the capabilities the guest keeps (agent.PodCaps); the
// workloads it starts get none.
var podCaps = []corev1.Capability{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP"}

func (b *Backend) selector() map[string]string {
	return map[string]string{LabelManagedBy: managedBy, LabelComponent: componentSandbox, LabelInstance: b.o.Instance}
}

// tenantLabel is the tenant id if it is a valid label value, else a
// digest of it.
func tenantLabel(t string) string {
	if t == "" {
		return ""
	}
	if len(t) <= 63 && labelValueRE.MatchString(t) {
		return t
	}
	sum := sha256.Sum256([]byte(t))
	return "h-" + hex.EncodeToString(sum[:15])
}

func (b *Backend) labels(id, tenant string) map[string]string {
	l := b.selector()
	l[LabelSandbox] = id
	if tl := tenantLabel(tenant); tl != "" {
		l[LabelTenant] = tl
	}
	return l
}

func secretName(id string) string { return id + "-guest" }

// guestSecret holds what the guest needs: its config, key, certificate
// and the CA that issued the host's certificate.
func (b *Backend) guestSecret(cfg runtime.Config, certPEM, keyPEM []byte) (*corev1.Secret, error) {
	pc, err := json.Marshal(guestapi.PodConfig{Version: guestapi.Version, ID: cfg.ID, Hostname: cfg.Hostname, Env: cfg.Env})
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(cfg.ID), Namespace: b.o.Namespace, Labels: b.labels(cfg.ID, cfg.Tenant)},
		Type:       corev1.SecretTypeOpaque,
		Immutable:  ptr(true),
		Data: map[string][]byte{guestapi.PodConfigFile: pc, guestapi.PodCertFile: certPEM,
			guestapi.PodKeyFile: keyPEM, guestapi.PodCAFile: b.id.caPEM},
	}, nil
}

// podSpec is the sandbox's Pod.
func (b *Backend) podSpec(cfg runtime.Config, image string) *corev1.Pod {
	lim := corev1.ResourceList{}
	req := corev1.ResourceList{}
	if cfg.Limits.CPU > 0 {
		cpu := resource.NewMilliQuantity(int64(cfg.Limits.CPU*1000+0.5), resource.DecimalSI)
		lim[corev1.ResourceCPU] = *cpu
		req[corev1.ResourceCPU] = minQ(b.o.CPURequest, *cpu)
	} else {
		req[corev1.ResourceCPU] = b.o.CPURequest
	}
	if cfg.Limits.MemoryBytes > 0 {
		mem := resource.NewQuantity(cfg.Limits.MemoryBytes, resource.BinarySI)
		lim[corev1.ResourceMemory] = *mem
		req[corev1.ResourceMemory] = minQ(b.o.MemoryRequest, *mem)
	} else {
		req[corev1.ResourceMemory] = b.o.MemoryRequest
	}
	if cfg.Limits.DiskBytes > 0 {
		// The kubelet evicts a Pod over its ephemeral-storage limit (the
		// container's writable layer, logs and emptyDirs): no ENOSPC.
		lim[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(cfg.Limits.DiskBytes, resource.BinarySI)
	}
	small := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	noEscalation := &corev1.SecurityContext{
		RunAsUser: ptr(int64(0)), RunAsGroup: ptr(int64(0)), RunAsNonRoot: ptr(false),
		Privileged: ptr(false), AllowPrivilegeEscalation: ptr(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	initSC := noEscalation.DeepCopy()
	initSC.Capabilities.Add = []corev1.Capability{"CHOWN"} // the credentials go to an owner no workload is
	initSC.ReadOnlyRootFilesystem = ptr(true)
	guestSC := noEscalation.DeepCopy()
	guestSC.Capabilities.Add = podCaps

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cfg.ID, Namespace: b.o.Namespace, Labels: b.labels(cfg.ID, cfg.Tenant)},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			// No API credentials inside a sandbox, nor the cluster's
			// service addresses in its environment.
			AutomountServiceAccountToken:  ptr(false),
			EnableServiceLinks:            ptr(false),
			TerminationGracePeriodSeconds: ptr(int64(1)),
			SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			InitContainers: []corev1.Container{{
				Name:    initName,
				Image:   b.o.GuestImage,
				Command: []string{"/paddock-guest", "pod-init", "-from", secretMount, "-bin", guestPath, "-creds", credsMount},
				VolumeMounts: []corev1.VolumeMount{{Name: "secret", MountPath: secretMount, ReadOnly: true},
					{Name: "bin", MountPath: binMount}, {Name: "creds", MountPath: credsMount}},
				ImagePullPolicy:          b.o.PullPolicy,
				Resources:                small,
				SecurityContext:          initSC,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Containers: []corev1.Container{{
				Name:    containerName,
				Image:   image,
				Command: []string{guestPath, "pod", "-creds", credsMount, "-port", strconv.Itoa(guestapi.PodPort)},
				Ports:   []corev1.ContainerPort{{Name: "guest", ContainerPort: guestapi.PodPort, Protocol: corev1.ProtocolTCP}},
				// The guest binary is read-only to the sandbox.
				VolumeMounts: []corev1.VolumeMount{{Name: "bin", MountPath: binMount, ReadOnly: true},
					{Name: "creds", MountPath: credsMount}},
				ImagePullPolicy:          b.o.PullPolicy,
				Resources:                corev1.ResourceRequirements{Limits: lim, Requests: req},
				SecurityContext:          guestSC,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{
				{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: secretName(cfg.ID), DefaultMode: ptr(int32(0o400))}}},
				{Name: "bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("128Mi"))}}},
				// Memory-backed: the credentials never touch the node's disk.
				{Name: "creds", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
					Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("1Mi"))}}},
			},
		},
	}
	if dnsLabelRE.MatchString(cfg.Hostname) {
		pod.Spec.Hostname = cfg.Hostname
	}
	if b.o.RuntimeClass != "" {
		pod.Spec.RuntimeClassName = ptr(b.o.RuntimeClass)
	}
	if b.o.UserNamespaces {
		pod.Spec.HostUsers = ptr(false)
	}
	if b.o.DNS != nil {
		pod.Spec.DNSPolicy = corev1.DNSNone
		pod.Spec.DNSConfig = b.o.DNS.DeepCopy()
	} else {
		pod.Spec.DNSPolicy = corev1.DNSDefault
	}
	return pod
}

// policyName is the NetworkPolicy covering this installation's sandboxes.
func (b *Backend) policyName() string { return "paddock-sandboxes-" + b.o.Instance }

// networkPolicy denies sandbox Pods every connection but those to the
// configured egress peers, and admits only the configured peers to the
// guest's port (and the node, which every policy engine admits).
func (b *Backend) networkPolicy() *networkingv1.NetworkPolicy {
	port := intstr.FromInt32(guestapi.PodPort)
	tcp := corev1.ProtocolTCP
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: b.policyName(), Namespace: b.o.Namespace,
			Labels: map[string]string{LabelManagedBy: managedBy, LabelInstance: b.o.Instance}},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: b.selector()},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{},
			Egress:      []networkingv1.NetworkPolicyEgressRule{},
		},
	}
	if len(b.o.Ingress) > 0 {
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			From: b.o.Ingress, Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}})
	}
	np.Spec.Egress = append(np.Spec.Egress, b.o.Egress...)
	return np
}

func minQ(a, b resource.Quantity) resource.Quantity {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

func ptr[T any](v T) *T { return &v }
