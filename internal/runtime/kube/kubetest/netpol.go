package kubetest

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The harness's network plugin. The CNI bridge plugin connects pods but
// enforces no NetworkPolicy, and no policy engine (Calico, Cilium,
// kube-router) runs here without images from the internet. So the harness
// enforces NetworkPolicy itself, with nftables on the node, from the
// Pods, Namespaces and NetworkPolicies it watches:
//
//   - layer 2 between pods is cut (a bridge-family table drops every frame
//     between bridge ports); the host proxies ARP and routes pod-to-pod
//     traffic, so every packet crosses the inet forward hook, where
//     conntrack tracks it;
//   - a pod selected by a policy of type Egress may open connections only
//     to what the policies selecting it allow (to pods and to the node),
//     one of type Ingress may only accept what they allow; answers of
//     allowed connections pass; everything else is refused at once
//     (TCP reset / ICMP admin-prohibited), so tests fail fast;
//   - a source address the plugin does not know yet (a pod whose IP it has
//     not seen) is dropped: a new pod is isolated until it is known;
//   - traffic from the node itself to its pods is always allowed, as most
//     network plugins do (kubelet probes; Paddock's server in the tests).
//
// Supported: podSelector, namespaceSelector, both, ipBlock with except,
// ports with protocol, number and endPort, and named ports of ingress
// rules (resolved on the selected pod). Named ports of egress rules are
// not resolved (such a port matches nothing and is reported).

// allowRule admits traffic to (egress) or from (ingress) any of Peers on
// any of Ports; a nil slice means any.
type allowRule struct {
	Peers []peer
	Ports []portRange
}

type peer struct {
	CIDR   netip.Prefix
	Except []netip.Prefix
}

type portRange struct {
	Proto    string // tcp, udp, sctp
	From, To int    // 0: every port of Proto
}

// policyModel is what renderRuleset turns into nftables rules.
type policyModel struct {
	Known   []netip.Addr // every pod address on this node
	Egress  map[netip.Addr][]allowRule
	Ingress map[netip.Addr][]allowRule
	// Warnings are policy parts the plugin could not enforce.
	Warnings []string
}

// buildModel evaluates the policies against the pods that have an address
// in podCIDR.
func buildModel(pods []*corev1.Pod, nss []*corev1.Namespace, pols []*networkingv1.NetworkPolicy, podCIDR netip.Prefix) *policyModel {
	m := &policyModel{Egress: map[netip.Addr][]allowRule{}, Ingress: map[netip.Addr][]allowRule{}}
	nsLabels := map[string]labels.Set{}
	for _, ns := range nss {
		nsLabels[ns.Name] = labels.Set(ns.Labels)
	}
	type live struct {
		pod *corev1.Pod
		ip  netip.Addr
	}
	var lives []live
	for _, p := range pods {
		if p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		ip, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil || !podCIDR.Contains(ip) {
			continue
		}
		lives = append(lives, live{p, ip})
		m.Known = append(m.Known, ip)
	}
	sort.Slice(m.Known, func(i, j int) bool { return m.Known[i].Less(m.Known[j]) })
	sort.Slice(pols, func(i, j int) bool {
		return pols[i].Namespace+"/"+pols[i].Name < pols[j].Namespace+"/"+pols[j].Name
	})
	warn := func(pol *networkingv1.NetworkPolicy, f string, a ...any) {
		m.Warnings = append(m.Warnings, pol.Namespace+"/"+pol.Name+": "+fmt.Sprintf(f, a...))
	}
	selector := func(pol *networkingv1.NetworkPolicy, s *metav1.LabelSelector) labels.Selector {
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			warn(pol, "bad selector: %v", err)
			return labels.Nothing()
		}
		return sel
	}
	// peers resolves a rule's peer list; nil means any, an empty non-nil
	// slice means none.
	peers := func(pol *networkingv1.NetworkPolicy, ps []networkingv1.NetworkPolicyPeer) []peer {
		if len(ps) == 0 {
			return nil
		}
		out := []peer{}
		for _, p := range ps {
			if p.IPBlock != nil {
				c, err := netip.ParsePrefix(p.IPBlock.CIDR)
				if err != nil || !c.Addr().Is4() {
					warn(pol, "ipBlock %q is not an IPv4 CIDR; ignored", p.IPBlock.CIDR)
					continue
				}
				pe := peer{CIDR: c.Masked()}
				for _, e := range p.IPBlock.Except {
					if ec, err := netip.ParsePrefix(e); err == nil && ec.Addr().Is4() {
						pe.Except = append(pe.Except, ec.Masked())
					} else {
						warn(pol, "ipBlock except %q is not an IPv4 CIDR; ignored", e)
					}
				}
				out = append(out, pe)
				continue
			}
			podSel, nsSel := labels.Everything(), labels.Selector(nil)
			if p.PodSelector != nil {
				podSel = selector(pol, p.PodSelector)
			}
			if p.NamespaceSelector != nil {
				nsSel = selector(pol, p.NamespaceSelector)
			}
			for _, l := range lives {
				inNS := l.pod.Namespace == pol.Namespace
				if nsSel != nil {
					inNS = nsSel.Matches(nsLabels[l.pod.Namespace])
				}
				if inNS && podSel.Matches(labels.Set(l.pod.Labels)) {
					out = append(out, peer{CIDR: netip.PrefixFrom(l.ip, 32)})
				}
			}
		}
		return out
	}
	// ports resolves a rule's ports; named ones on target (nil for egress).
	ports := func(pol *networkingv1.NetworkPolicy, ps []networkingv1.NetworkPolicyPort, target *corev1.Pod) []portRange {
		if len(ps) == 0 {
			return nil
		}
		out := []portRange{}
		for _, p := range ps {
			proto := "tcp"
			if p.Protocol != nil {
				proto = strings.ToLower(string(*p.Protocol))
			}
			r := portRange{Proto: proto}
			switch {
			case p.Port == nil:
			case p.Port.Type == intstr.String:
				n := namedPort(target, p.Port.StrVal, proto)
				if n == 0 {
					warn(pol, "named port %q not resolved; it matches nothing", p.Port.StrVal)
					continue
				}
				r.From, r.To = n, n
			default:
				r.From, r.To = int(p.Port.IntVal), int(p.Port.IntVal)
				if p.EndPort != nil && int(*p.EndPort) > r.From {
					r.To = int(*p.EndPort)
				}
			}
			out = append(out, r)
		}
		return out
	}
	for _, pol := range pols {
		sel := selector(pol, &pol.Spec.PodSelector)
		ingress, egress := false, false
		for _, t := range pol.Spec.PolicyTypes {
			ingress = ingress || t == networkingv1.PolicyTypeIngress
			egress = egress || t == networkingv1.PolicyTypeEgress
		}
		if len(pol.Spec.PolicyTypes) == 0 {
			ingress, egress = true, len(pol.Spec.Egress) > 0
		}
		for _, l := range lives {
			if l.pod.Namespace != pol.Namespace || !sel.Matches(labels.Set(l.pod.Labels)) {
				continue
			}
			if ingress {
				rules := m.Ingress[l.ip]
				if rules == nil {
					rules = []allowRule{}
				}
				for _, r := range pol.Spec.Ingress {
					rules = append(rules, allowRule{Peers: peers(pol, r.From), Ports: ports(pol, r.Ports, l.pod)})
				}
				m.Ingress[l.ip] = rules
			}
			if egress {
				rules := m.Egress[l.ip]
				if rules == nil {
					rules = []allowRule{}
				}
				for _, r := range pol.Spec.Egress {
					rules = append(rules, allowRule{Peers: peers(pol, r.To), Ports: ports(pol, r.Ports, nil)})
				}
				m.Egress[l.ip] = rules
			}
		}
	}
	slices.Sort(m.Warnings)
	m.Warnings = slices.Compact(m.Warnings)
	return m
}

func namedPort(p *corev1.Pod, name, proto string) int {
	if p == nil {
		return 0
	}
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			pp := "tcp"
			if cp.Protocol != "" {
				pp = strings.ToLower(string(cp.Protocol))
			}
			if cp.Name == name && pp == proto {
				return int(cp.ContainerPort)
			}
		}
	}
	return 0
}

// renderRuleset writes the cluster's two tables for model m (nil: no pods
// known yet, so every pod source is dropped).
func renderRuleset(n *hostNet, m *policyModel) string {
	if m == nil {
		m = &policyModel{}
	}
	var b strings.Builder
	br := fmt.Sprintf("%q", n.Bridge)
	fmt.Fprintf(&b, "table bridge %s {\n\tchain forward {\n\t\ttype filter hook forward priority 0; policy drop;\n\t}\n}\n", n.Table)
	fmt.Fprintf(&b, "table inet %s {\n\tset pods {\n\t\ttype ipv4_addr\n", n.Table)
	if len(m.Known) > 0 {
		ips := make([]string, len(m.Known))
		for i, a := range m.Known {
			ips[i] = a.String()
		}
		fmt.Fprintf(&b, "\t\telements = { %s }\n", strings.Join(ips, ", "))
	}
	b.WriteString("\t}\n")

	egress, ingress := sortedAddrs(m.Egress), sortedAddrs(m.Ingress)
	common := func() {
		fmt.Fprintf(&b, "\t\tiifname %s ct state established,related accept\n", br)
		fmt.Fprintf(&b, "\t\tiifname %s ct state invalid drop\n", br)
		fmt.Fprintf(&b, "\t\tiifname %s meta nfproto ipv6 drop\n", br)
		fmt.Fprintf(&b, "\t\tiifname %s ip saddr != @pods drop\n", br)
		for i, a := range egress {
			fmt.Fprintf(&b, "\t\tiifname %s ip saddr %s jump egress_%d\n", br, a, i)
		}
	}
	b.WriteString("\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n")
	// Nothing is routed between the pod network and anything else.
	fmt.Fprintf(&b, "\t\tiifname %s oifname != %s drop\n", br, br)
	fmt.Fprintf(&b, "\t\toifname %s iifname != %s drop\n", br, br)
	common()
	for i, a := range ingress {
		fmt.Fprintf(&b, "\t\tiifname %s ip daddr %s jump ingress_%d\n", br, a, i)
	}
	b.WriteString("\t}\n")
	b.WriteString("\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n")
	common()
	b.WriteString("\t}\n")
	b.WriteString("\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n")
	fmt.Fprintf(&b, "\t\toifname %s icmp type redirect drop\n\t}\n", br)
	for i, a := range egress {
		fmt.Fprintf(&b, "\tchain egress_%d {\n", i)
		writeAllow(&b, "daddr", "return", m.Egress[a])
		b.WriteString("\t}\n")
	}
	for i, a := range ingress {
		fmt.Fprintf(&b, "\tchain ingress_%d {\n", i)
		writeAllow(&b, "saddr", "accept", m.Ingress[a])
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// writeAllow writes one allow rule per peer and port, then the refusal.
func writeAllow(b *strings.Builder, dir, verdict string, rules []allowRule) {
	for _, r := range rules {
		peers := r.Peers
		if peers == nil {
			peers = []peer{{}}
		}
		ports := r.Ports
		if ports == nil {
			ports = []portRange{{}}
		}
		for _, p := range peers {
			var match string
			if p.CIDR.IsValid() {
				for _, e := range p.Except {
					match += fmt.Sprintf("ip %s != %s ", dir, e)
				}
				match += fmt.Sprintf("ip %s %s ", dir, p.CIDR)
			}
			for _, pr := range ports {
				m := match
				switch {
				case pr.Proto == "":
				case pr.From == 0:
					m += "meta l4proto " + pr.Proto + " "
				case pr.From == pr.To:
					m += fmt.Sprintf("%s dport %d ", pr.Proto, pr.From)
				default:
					m += fmt.Sprintf("%s dport %d-%d ", pr.Proto, pr.From, pr.To)
				}
				fmt.Fprintf(b, "\t\t%s%s\n", m, verdict)
			}
		}
	}
	b.WriteString("\t\tmeta l4proto tcp reject with tcp reset\n")
	b.WriteString("\t\treject with icmpx admin-prohibited\n")
}

func sortedAddrs(m map[netip.Addr][]allowRule) []netip.Addr {
	out := make([]netip.Addr, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}
