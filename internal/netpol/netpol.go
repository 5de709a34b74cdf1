// Package netpol decides whether NetworkPolicies let a connection
// through, as a policy-enforcing network plugin does: the simulated
// nodes ask it before a pod's connection is made and before a pod's
// server takes one, and the Service proxy before it forwards one. It
// watches pods, namespaces, nodes and NetworkPolicies.
package netpol

import (
	"context"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
)

// syncWait bounds how long a decision waits for the caches to fill at
// start; until then a connection waits, as one would for a network
// plugin that has not programmed its rules yet.
const syncWait = 30 * time.Second

// byIP indexes pods and nodes by address.
const byIP = "ip"

// Policies answers whether NetworkPolicies allow a connection.
type Policies struct {
	factory  informers.SharedInformerFactory
	pods     cache.Indexer
	nodes    cache.Indexer
	services cache.Indexer
	ns       corelisters.NamespaceLister
	policies networkinglisters.NetworkPolicyLister
	synced   []cache.InformerSynced
	started  chan struct{}
}

// New returns Policies that read the cluster with cs; Run fills them.
func New(cs kubernetes.Interface) *Policies {
	f := informers.NewSharedInformerFactory(cs, 0)
	pods, nodes := f.Core().V1().Pods().Informer(), f.Core().V1().Nodes().Informer()
	_ = pods.AddIndexers(cache.Indexers{byIP: func(obj any) ([]string, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.HostNetwork {
			return nil, nil
		}
		var ips []string
		for _, ip := range p.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		return ips, nil
	}})
	_ = nodes.AddIndexers(cache.Indexers{byIP: func(obj any) ([]string, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return nil, nil
		}
		var ips []string
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
				ips = append(ips, a.Address)
			}
		}
		return ips, nil
	}})
	svcs := f.Core().V1().Services().Informer()
	_ = svcs.AddIndexers(cache.Indexers{byIP: func(obj any) ([]string, error) {
		s, ok := obj.(*corev1.Service)
		if !ok {
			return nil, nil
		}
		return s.Spec.ClusterIPs, nil
	}})
	ns, np := f.Core().V1().Namespaces(), f.Networking().V1().NetworkPolicies()
	return &Policies{
		factory: f, pods: pods.GetIndexer(), nodes: nodes.GetIndexer(), services: svcs.GetIndexer(), ns: ns.Lister(), policies: np.Lister(),
		synced:  []cache.InformerSynced{pods.HasSynced, nodes.HasSynced, svcs.HasSynced, ns.Informer().HasSynced, np.Informer().HasSynced},
		started: make(chan struct{}),
	}
}

// Run watches the cluster until ctx is done.
func (p *Policies) Run(ctx context.Context) error {
	p.factory.Start(ctx.Done())
	close(p.started)
	<-ctx.Done()
	p.factory.Shutdown()
	return nil
}

// Allowed reports whether a connection from src to dst:port over protocol
// ("TCP", "UDP", "SCTP") is
// let through: the egress policies of the source pod, if any select it,
// must allow it, and so must the ingress policies of the destination pod.
// Traffic from a node's own address (the kubelet's probes, host-network
// pods) to a pod is always let in, as network plugins let it; an address
// that is neither a pod's nor a node's is matched by ipBlock rules only.
// A connection to a Service's cluster IP is let through here: the
// Service proxy asks again for the endpoint it chooses, as policies see
// the destination after a Service's address translation.
// Allowed waits for the caches to fill first (at most syncWait, or until
// ctx is done, and then lets the connection through).
func (p *Policies) Allowed(ctx context.Context, src, dst netip.Addr, port int32, protocol string) bool {
	proto := corev1.Protocol(protocol)
	if !p.wait(ctx) {
		return true
	}
	if objs, _ := p.services.ByIndex(byIP, dst.String()); len(objs) > 0 {
		return true
	}
	srcPod, dstPod := p.podAt(src), p.podAt(dst)
	if srcPod != nil && !p.allowedBy(srcPod, networkingv1.PolicyTypeEgress, dstPod, dst, port, proto) {
		return false
	}
	if dstPod == nil || srcPod == nil && p.isNode(src) {
		return true
	}
	return p.allowedBy(dstPod, networkingv1.PolicyTypeIngress, srcPod, src, port, proto)
}

// wait waits for the caches; false when they did not fill in time.
func (p *Policies) wait(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, syncWait)
	defer cancel()
	select {
	case <-p.started:
	case <-ctx.Done():
		return false
	}
	return cache.WaitForCacheSync(ctx.Done(), p.synced...)
}

// podAt is the running pod with that address, if any.
func (p *Policies) podAt(ip netip.Addr) *corev1.Pod {
	objs, _ := p.pods.ByIndex(byIP, ip.String())
	for _, o := range objs {
		if pod := o.(*corev1.Pod); pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return pod
		}
	}
	return nil
}

func (p *Policies) isNode(ip netip.Addr) bool {
	objs, _ := p.nodes.ByIndex(byIP, ip.String())
	return len(objs) > 0
}

// allowedBy applies the policies of pod's namespace that select it and
// have the direction: none means allowed; else a rule of one of them
// must match the peer (a pod, or only an address) and the port.
func (p *Policies) allowedBy(pod *corev1.Pod, dir networkingv1.PolicyType, peerPod *corev1.Pod, peerIP netip.Addr, port int32, proto corev1.Protocol) bool {
	list, err := p.policies.NetworkPolicies(pod.Namespace).List(labels.Everything())
	if err != nil {
		return true
	}
	selected := false
	for _, np := range list {
		if !hasType(np, dir) || !selects(&np.Spec.PodSelector, pod.Labels) {
			continue
		}
		selected = true
		// The port is the destination's: for egress the peer's, for
		// ingress the pod's own (a named port resolves on that pod).
		dstPod := pod
		if dir == networkingv1.PolicyTypeEgress {
			dstPod = peerPod
		}
		if dir == networkingv1.PolicyTypeIngress {
			for _, r := range np.Spec.Ingress {
				if p.peersMatch(np.Namespace, r.From, peerPod, peerIP) && portsMatch(r.Ports, dstPod, port, proto) {
					return true
				}
			}
			continue
		}
		for _, r := range np.Spec.Egress {
			if p.peersMatch(np.Namespace, r.To, peerPod, peerIP) && portsMatch(r.Ports, dstPod, port, proto) {
				return true
			}
		}
	}
	return !selected
}

// hasType tells whether a policy applies to a direction, with kube's
// defaulting of an empty policyTypes (Ingress always, Egress when it has
// egress rules).
func hasType(np *networkingv1.NetworkPolicy, dir networkingv1.PolicyType) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return dir == networkingv1.PolicyTypeIngress || len(np.Spec.Egress) > 0
	}
	for _, t := range np.Spec.PolicyTypes {
		if t == dir {
			return true
		}
	}
	return false
}

// selects matches a label selector; a selector that does not parse
// selects nothing.
func selects(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(l))
}

// peersMatch: no peers match everything; else one must match.
func (p *Policies) peersMatch(policyNS string, peers []networkingv1.NetworkPolicyPeer, pod *corev1.Pod, ip netip.Addr) bool {
	if len(peers) == 0 {
		return true
	}
	for i := range peers {
		if p.peerMatches(policyNS, &peers[i], pod, ip) {
			return true
		}
	}
	return false
}

func (p *Policies) peerMatches(policyNS string, peer *networkingv1.NetworkPolicyPeer, pod *corev1.Pod, ip netip.Addr) bool {
	if b := peer.IPBlock; b != nil {
		return inBlock(b, ip)
	}
	if pod == nil {
		return false
	}
	if peer.NamespaceSelector == nil {
		if pod.Namespace != policyNS {
			return false
		}
	} else {
		ns, err := p.ns.Get(pod.Namespace)
		if err != nil || !selects(peer.NamespaceSelector, ns.Labels) {
			return false
		}
	}
	return peer.PodSelector == nil || selects(peer.PodSelector, pod.Labels)
}

// inBlock: in the CIDR and in none of its exceptions.
func inBlock(b *networkingv1.IPBlock, ip netip.Addr) bool {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil || !cidr.Contains(ip) {
		return false
	}
	for _, e := range b.Except {
		if ex, err := netip.ParsePrefix(e); err == nil && ex.Contains(ip) {
			return false
		}
	}
	return true
}

// portsMatch: no ports match every port; else one must match the
// protocol (TCP when unset) and the port, a range up to endPort, or a
// named port of the destination pod's containers.
func portsMatch(ports []networkingv1.NetworkPolicyPort, dst *corev1.Pod, port int32, proto corev1.Protocol) bool {
	if len(ports) == 0 {
		return true
	}
	for _, pp := range ports {
		want := corev1.ProtocolTCP
		if pp.Protocol != nil {
			want = *pp.Protocol
		}
		if want != proto {
			continue
		}
		switch {
		case pp.Port == nil:
			return true
		case pp.Port.Type == intstr.Int:
			lo, hi := pp.Port.IntVal, pp.Port.IntVal
			if pp.EndPort != nil {
				hi = *pp.EndPort
			}
			if port >= lo && port <= hi {
				return true
			}
		case dst != nil && namedPort(dst, pp.Port.StrVal, proto) == port:
			return true
		}
	}
	return false
}

// namedPort is the number of a pod's container port of that name, or -1.
func namedPort(pod *corev1.Pod, name string, proto corev1.Protocol) int32 {
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			p := cp.Protocol
			if p == "" {
				p = corev1.ProtocolTCP
			}
			if cp.Name == name && p == proto {
				return cp.ContainerPort
			}
		}
	}
	return -1
}
