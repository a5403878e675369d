package kube

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/template"
)

func testBackend(t testing.TB, mod func(*Options)) *Backend {
	t.Helper()
	o := Options{Config: &rest.Config{Host: "https://cluster.invalid"}, Namespace: "ns", GuestImage: "reg/guest@sha256:00",
		Image: func(*template.Template) (string, error) { return "reg/img:1", nil }}
	if mod != nil {
		mod(&o)
	}
	if err := o.fill(); err != nil {
		t.Fatal(err)
	}
	return &Backend{o: o, id: testIdentity(t)}
}

func TestPodSpec(t *testing.T) {
	b := testBackend(t, func(o *Options) { o.RuntimeClass = "gvisor"; o.UserNamespaces = true })
	cfg := runtime.Config{ID: "sb-abc", Tenant: "acme", Hostname: "sb-abc",
		Limits: runtime.Limits{CPU: 1.5, MemoryBytes: 512 << 20, DiskBytes: 1 << 30, Pids: 512}}
	p := b.podSpec(cfg, "reg/img:1")
	s := p.Spec
	if *s.AutomountServiceAccountToken || *s.EnableServiceLinks {
		t.Error("a sandbox Pod must get no service-account token and no service environment")
	}
	if s.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("a sandbox whose agent died must not be restarted behind the manager's back")
	}
	if p.Labels[LabelSandbox] != "sb-abc" || p.Labels[LabelTenant] != "acme" || p.Labels[LabelInstance] != "default" {
		t.Errorf("labels = %v", p.Labels)
	}
	if *s.RuntimeClassName != "gvisor" || *s.HostUsers {
		t.Error("runtime class and user namespaces not applied")
	}
	c := s.Containers[0]
	if c.Image != "reg/img:1" || c.Command[0] != guestPath {
		t.Errorf("sandbox container runs %s %v", c.Image, c.Command)
	}
	if got := c.Resources.Limits[corev1.ResourceCPU]; got.MilliValue() != 1500 {
		t.Errorf("cpu limit %v", got)
	}
	if got := c.Resources.Limits[corev1.ResourceMemory]; got.Value() != 512<<20 {
		t.Errorf("memory limit %v", got)
	}
	if got := c.Resources.Requests[corev1.ResourceCPU]; got.MilliValue() != 10 {
		t.Errorf("cpu request %v, want the small default", got)
	}
	if got := c.Resources.Limits[corev1.ResourceEphemeralStorage]; got.Value() != 1<<30 {
		t.Errorf("disk limit %v", got)
	}
	sc := c.SecurityContext
	if *sc.AllowPrivilegeEscalation || *sc.Privileged || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("sandbox container security context %+v", sc)
	}
	for _, add := range sc.Capabilities.Add {
		switch add {
		case "SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE", "DAC_READ_SEARCH", "SYS_MODULE", "NET_RAW":
			t.Errorf("capability %s granted", add)
		}
	}
	for _, m := range c.VolumeMounts {
		if m.Name == "secret" {
			t.Error("the sandbox container mounts the credentials Secret")
		}
		if m.Name == "bin" && !m.ReadOnly {
			t.Error("the guest binary is writable by the sandbox")
		}
	}
	ic := s.InitContainers[0]
	if ic.Image != b.o.GuestImage || !*ic.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("init container %s %+v", ic.Image, ic.SecurityContext)
	}
	for _, v := range s.Volumes {
		if v.Name == "creds" && v.EmptyDir.Medium != corev1.StorageMediumMemory {
			t.Error("credentials emptyDir is not memory-backed")
		}
	}
}

func TestTenantLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"acme", "acme"}, {"", ""}, {"t_1.x", "t_1.x"},
	} {
		if got := tenantLabel(tc.in); got != tc.want {
			t.Errorf("tenantLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{strings.Repeat("a", 64), "has space", "é", "-lead"} {
		got := tenantLabel(in)
		if !strings.HasPrefix(got, "h-") || !labelValueRE.MatchString(got) || len(got) > 63 {
			t.Errorf("tenantLabel(%q) = %q, want a valid digest label", in, got)
		}
	}
}

func TestGuestSecretCarriesConfig(t *testing.T) {
	b := testBackend(t, nil)
	cfg := runtime.Config{ID: "sb-abc", Hostname: "h", Env: map[string]string{"K": "V"}}
	s, err := b.guestSecret(cfg, []byte("c"), []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	var pc guestapi.PodConfig
	if err := json.Unmarshal(s.Data[guestapi.PodConfigFile], &pc); err != nil {
		t.Fatal(err)
	}
	if pc.ID != "sb-abc" || pc.Env["K"] != "V" || pc.Version != guestapi.Version {
		t.Errorf("config %+v", pc)
	}
	if string(s.Data[guestapi.PodCAFile]) != string(b.id.caPEM) || !*s.Immutable {
		t.Error("secret lacks the CA or is mutable")
	}
}

func TestNetworkPolicyDefaultDeny(t *testing.T) {
	b := testBackend(t, nil)
	np := b.networkPolicy()
	if len(np.Spec.PolicyTypes) != 2 || len(np.Spec.Ingress) != 0 || len(np.Spec.Egress) != 0 {
		t.Errorf("without peers the policy must deny both ways: %+v", np.Spec)
	}
	if np.Spec.PodSelector.MatchLabels[LabelComponent] != componentSandbox {
		t.Error("the policy does not select sandbox Pods")
	}
}
