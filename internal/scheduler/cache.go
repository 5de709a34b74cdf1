package scheduler

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// nodeInfo is a node as the filters see it: the fields they read,
// precomputed when the Node changes, and the sums of the pods assigned to
// it (bound, or assumed while their binding is in flight).
type nodeInfo struct {
	node *corev1.Node // nil while only pods name the node
	name string
	// index is the node's place in cache.list, -1 when not listed.
	index int

	labels        labels.Set
	unschedulable bool
	// taints are the NoSchedule and NoExecute taints (filtered);
	// preferTaints the PreferNoSchedule ones (scored).
	taints       []corev1.Taint
	preferTaints []corev1.Taint
	allocatable  resources
	allowedPods  int64

	pods      map[types.UID]*podInfo
	requested resources
	// nonZero sums the pods' scoring requests (cpu and memory).
	nonZero resources
	ports   []hostPort
	// spread counts the assigned pods by spreading key.
	spread map[string]int
}

func newNodeInfo(name string) *nodeInfo {
	return &nodeInfo{name: name, index: -1, pods: map[types.UID]*podInfo{}, spread: map[string]int{}}
}

// setNode precomputes what the filters read from node.
func (n *nodeInfo) setNode(node *corev1.Node) {
	n.node = node
	n.labels = labels.Set(node.Labels)
	n.unschedulable = node.Spec.Unschedulable
	n.taints, n.preferTaints = nil, nil
	for _, t := range node.Spec.Taints {
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute:
			n.taints = append(n.taints, t)
		case corev1.TaintEffectPreferNoSchedule:
			n.preferTaints = append(n.preferTaints, t)
		}
	}
	n.allocatable, n.allowedPods = fromList(node.Status.Allocatable)
}

func (n *nodeInfo) addPod(pi *podInfo) {
	n.pods[pi.pod.UID] = pi
	n.requested.add(&pi.req)
	n.nonZero.add(&pi.nonZero)
	n.ports = append(n.ports, pi.ports...)
	if pi.spreadKey != "" {
		n.spread[pi.spreadKey]++
	}
}

// clone copies the node with its own accounting of pods, for a what-if
// (preemption's dry run, nominated pods) that must not touch the cache.
func (n *nodeInfo) clone() *nodeInfo {
	c := *n
	c.pods = maps.Clone(n.pods)
	c.requested = n.requested.clone()
	c.nonZero = n.nonZero.clone()
	c.ports = slices.Clone(n.ports)
	c.spread = maps.Clone(n.spread)
	return &c
}

func (n *nodeInfo) removePod(pi *podInfo) {
	if _, ok := n.pods[pi.pod.UID]; !ok {
		return
	}
	delete(n.pods, pi.pod.UID)
	n.requested.sub(&pi.req)
	n.nonZero.sub(&pi.nonZero)
	for _, p := range pi.ports {
		if i := slices.Index(n.ports, p); i >= 0 {
			n.ports = slices.Delete(n.ports, i, i+1)
		}
	}
	if pi.spreadKey != "" {
		if n.spread[pi.spreadKey]--; n.spread[pi.spreadKey] <= 0 {
			delete(n.spread, pi.spreadKey)
		}
	}
}

// podGroup counts, per node, assigned pods that pod (anti-)affinity sees
// alike: pods with the same namespace and labels (which a term selects
// all or none of), or pods carrying the same anti-affinity term. Checking
// one group stands for checking each of its pods, so InterPodAffinity
// costs the number of distinct groups, not of pods.
type podGroup struct {
	namespace string
	labels    labels.Set
	term      *affinityTerm
	nodes     map[string]int
}

func addToGroup(groups map[string]*podGroup, key string, g podGroup, node string, delta int) {
	cur := groups[key]
	if cur == nil {
		if delta < 0 {
			return
		}
		g.nodes = map[string]int{}
		cur = &g
		groups[key] = cur
	}
	if cur.nodes[node] += delta; cur.nodes[node] <= 0 {
		delete(cur.nodes, node)
		if len(cur.nodes) == 0 {
			delete(groups, key)
		}
	}
}

// cachedPod is an assigned pod the cache accounts for.
type cachedPod struct {
	info *podInfo
	node string
	// assumed: chosen by this scheduler, binding not yet observed.
	assumed bool
}

// cache holds the nodes and the pods assigned to them. It is not
// synchronized: the Scheduler guards it with its mutex.
type cache struct {
	nodes map[string]*nodeInfo
	// list holds the nodes that exist as Node objects, in the order the
	// scheduler walks them.
	list []*nodeInfo
	pods map[types.UID]*cachedPod
	// byLabels groups the assigned pods by namespace and labels; antiTerms
	// groups the required anti-affinity terms of assigned pods.
	byLabels  map[string]*podGroup
	antiTerms map[string]*podGroup
	// nsLabels returns a namespace's labels (for namespaceSelector).
	nsLabels func(ns string) labels.Set
}

func newCache(nsLabels func(string) labels.Set) *cache {
	if nsLabels == nil {
		nsLabels = func(string) labels.Set { return nil }
	}
	return &cache{
		nodes:     map[string]*nodeInfo{},
		pods:      map[types.UID]*cachedPod{},
		byLabels:  map[string]*podGroup{},
		antiTerms: map[string]*podGroup{},
		nsLabels:  nsLabels,
	}
}

func (c *cache) nodeInfoFor(name string) *nodeInfo {
	n := c.nodes[name]
	if n == nil {
		n = newNodeInfo(name)
		c.nodes[name] = n
	}
	return n
}

// setNode adds or updates a node. It reports whether the change can make
// a pending pod schedulable.
func (c *cache) setNode(node *corev1.Node) bool {
	n := c.nodeInfoFor(node.Name)
	old := n.node
	n.setNode(node)
	if n.index < 0 {
		n.index = len(c.list)
		c.list = append(c.list, n)
		return true
	}
	return nodeChangeMatters(old, node)
}

// nodeChangeMatters tells whether a node update can let a pod in that did
// not fit before: more allocatable, other labels or taints, uncordoned.
func nodeChangeMatters(old, cur *corev1.Node) bool {
	if old == nil {
		return true
	}
	return old.Spec.Unschedulable != cur.Spec.Unschedulable ||
		!maps.Equal(old.Labels, cur.Labels) ||
		!equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) ||
		!equality.Semantic.DeepEqual(old.Status.Allocatable, cur.Status.Allocatable)
}

func (c *cache) removeNode(name string) {
	n := c.nodes[name]
	if n == nil {
		return
	}
	if n.index >= 0 {
		last := len(c.list) - 1
		c.list[n.index] = c.list[last]
		c.list[n.index].index = n.index
		c.list = c.list[:last]
		n.index = -1
	}
	n.node = nil
	if len(n.pods) == 0 {
		delete(c.nodes, name)
	}
}

// addPod accounts for an assigned pod seen by the informer; a pod this
// scheduler assumed is confirmed.
func (c *cache) addPod(pod *corev1.Pod) {
	if cp := c.pods[pod.UID]; cp != nil {
		c.removeCached(cp)
	}
	c.place(newPodInfo(pod), pod.Spec.NodeName, false)
}

// assume accounts for a pod this scheduler chose node for, before the
// binding is observed.
func (c *cache) assume(pi *podInfo, node string) {
	if cp := c.pods[pi.pod.UID]; cp != nil {
		c.removeCached(cp)
	}
	c.place(pi, node, true)
}

func (c *cache) place(pi *podInfo, node string, assumed bool) {
	cp := &cachedPod{info: pi, node: node, assumed: assumed}
	c.pods[pi.pod.UID] = cp
	c.nodeInfoFor(node).addPod(pi)
	c.group(pi, node, 1)
}

func (c *cache) group(pi *podInfo, node string, delta int) {
	addToGroup(c.byLabels, pi.labelsKey, podGroup{namespace: pi.pod.Namespace, labels: labels.Set(pi.pod.Labels)}, node, delta)
	for i := range pi.antiAffinity {
		t := &pi.antiAffinity[i]
		addToGroup(c.antiTerms, t.key, podGroup{term: t}, node, delta)
	}
}

// removePod forgets a pod (deleted, finished, or an assumption whose
// binding failed).
func (c *cache) removePod(uid types.UID) {
	if cp := c.pods[uid]; cp != nil {
		c.removeCached(cp)
	}
}

// forgetAssumed forgets a pod only if it is still an assumption.
func (c *cache) forgetAssumed(uid types.UID) {
	if cp := c.pods[uid]; cp != nil && cp.assumed {
		c.removeCached(cp)
	}
}

func (c *cache) removeCached(cp *cachedPod) {
	uid := cp.info.pod.UID
	delete(c.pods, uid)
	c.group(cp.info, cp.node, -1)
	if n := c.nodes[cp.node]; n != nil {
		n.removePod(cp.info)
		if n.node == nil && len(n.pods) == 0 {
			delete(c.nodes, cp.node)
		}
	}
}
