package kubetest

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func pod(ns, name, ip string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8080}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}}
}

func TestBuildModel(t *testing.T) {
	cidr := netip.MustParsePrefix("10.64.2.0/24")
	tcp := corev1.ProtocolTCP
	p3128 := intstr.FromInt32(3128)
	web := intstr.FromString("web")
	sandboxes := metav1.LabelSelector{MatchLabels: map[string]string{"role": "sandbox"}}
	pods := []*corev1.Pod{
		pod("a", "sb1", "10.64.2.10", map[string]string{"role": "sandbox"}),
		pod("a", "sb2", "10.64.2.11", map[string]string{"role": "sandbox"}),
		pod("a", "proxy", "10.64.2.12", map[string]string{"role": "egress"}),
		pod("b", "other", "10.64.2.13", nil),
		pod("a", "elsewhere", "192.168.1.5", nil), // not on this node's pod network
		func() *corev1.Pod {
			p := pod("a", "done", "10.64.2.14", nil)
			p.Status.Phase = corev1.PodSucceeded
			return p
		}(),
	}
	nss := []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "x"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}}}
	cases := []struct {
		name        string
		pols        []*networkingv1.NetworkPolicy
		wantEgress  map[string]string // ip → rendered rules (peer/port pairs)
		wantIngress map[string]string
		warn        string
	}{
		{name: "no policy isolates nothing"},
		{name: "default deny both ways", pols: []*networkingv1.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "deny"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: sandboxes,
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}}}},
			wantEgress: map[string]string{"10.64.2.10": "", "10.64.2.11": ""}, wantIngress: map[string]string{"10.64.2.10": "", "10.64.2.11": ""}},
		{name: "egress to the proxy pod on 3128", pols: []*networkingv1.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eg"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: sandboxes, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
				Egress: []networkingv1.NetworkPolicyEgressRule{{
					To:    []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "egress"}}}},
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &p3128}}}}}}},
			wantEgress: map[string]string{"10.64.2.10": "10.64.2.12/32 tcp:3128", "10.64.2.11": "10.64.2.12/32 tcp:3128"}},
		{name: "namespace selector and ipBlock with except", pols: []*networkingv1.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "in"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}},
						PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "egress"}}},
					{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.64.0.0/16"}}}}}}}}},
			wantIngress: map[string]string{"10.64.2.13": "10.64.2.12/32 any,10.0.0.0/8-10.64.0.0/16 any"}},
		{name: "named ingress port resolved on the target", pols: []*networkingv1.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "named"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "egress"}},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: &web}}}}}}},
			wantIngress: map[string]string{"10.64.2.12": "any tcp:8080"}},
		{name: "named egress port is reported and matches nothing", pols: []*networkingv1.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eg"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: sandboxes, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
				Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: &web}}}}}}},
			wantEgress: map[string]string{"10.64.2.10": "none", "10.64.2.11": "none"}, warn: `named port "web" not resolved`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := buildModel(pods, nss, tc.pols, cidr)
			if len(m.Known) != 4 {
				t.Errorf("known = %v, want the 4 live pods on the pod network", m.Known)
			}
			check := func(dir string, got map[netip.Addr][]allowRule, want map[string]string) {
				if len(got) != len(want) {
					t.Errorf("%s isolated %d pods, want %d: %v", dir, len(got), len(want), got)
				}
				for ip, w := range want {
					if g := summarize(got[netip.MustParseAddr(ip)]); g != w {
						t.Errorf("%s of %s = %q, want %q", dir, ip, g, w)
					}
				}
			}
			check("egress", m.Egress, tc.wantEgress)
			check("ingress", m.Ingress, tc.wantIngress)
			if tc.warn != "" && !strings.Contains(strings.Join(m.Warnings, "\n"), tc.warn) {
				t.Errorf("warnings %q lack %q", m.Warnings, tc.warn)
			}
		})
	}
}

// summarize renders rules as "peer port,peer port" ("" for no rule at
// all, "none" for a rule that matches nothing).
func summarize(rules []allowRule) string {
	var parts []string
	for _, r := range rules {
		peers := []string{"any"}
		if r.Peers != nil {
			peers = nil
			for _, p := range r.Peers {
				s := p.CIDR.String()
				for _, e := range p.Except {
					s += "-" + e.String()
				}
				peers = append(peers, s)
			}
		}
		ports := []string{"any"}
		if r.Ports != nil {
			ports = nil
			for _, p := range r.Ports {
				ports = append(ports, p.Proto+":"+itoa(p.From))
			}
		}
		if len(peers) == 0 || len(ports) == 0 {
			parts = append(parts, "none")
			continue
		}
		for _, pe := range peers {
			for _, po := range ports {
				parts = append(parts, pe+" "+po)
			}
		}
	}
	return strings.Join(parts, ",")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestRenderRuleset(t *testing.T) {
	n := &hostNet{Bridge: "pktabc", Table: "paddock_kubetest_abc"}
	sb := netip.MustParseAddr("10.64.2.10")
	m := &policyModel{Known: []netip.Addr{sb},
		Egress: map[netip.Addr][]allowRule{sb: {{Peers: []peer{{CIDR: netip.MustParsePrefix("10.64.2.1/32")}},
			Ports: []portRange{{Proto: "tcp", From: 3128, To: 3128}, {Proto: "udp", From: 53, To: 60}}}}},
		Ingress: map[netip.Addr][]allowRule{sb: {}}}
	rs := renderRuleset(n, m)
	for _, want := range []string{
		"table bridge paddock_kubetest_abc", "policy drop", // no layer 2 between pods
		"elements = { 10.64.2.10 }",
		`iifname "pktabc" ip saddr != @pods drop`,
		`iifname "pktabc" ip saddr 10.64.2.10 jump egress_0`,
		`iifname "pktabc" ip daddr 10.64.2.10 jump ingress_0`,
		"ip daddr 10.64.2.1/32 tcp dport 3128 return",
		"ip daddr 10.64.2.1/32 udp dport 53-60 return",
		"meta l4proto tcp reject with tcp reset",
		`oifname "pktabc" icmp type redirect drop`,
	} {
		if !strings.Contains(rs, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, rs)
		}
	}
	if strings.Contains(rs, "ingress_0 {\n\t\tip") {
		t.Errorf("an ingress chain without rules must only refuse:\n%s", rs)
	}
}
