package scheduler

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"minik/internal/podutil"
)

// plugin names a filter, as a bit so that a pod can remember which
// filters rejected it and be retried only on events that concern them.
type plugin uint16

const (
	pluginNodeUnschedulable plugin = 1 << iota
	pluginNodeName
	pluginTaintToleration
	pluginNodeAffinity
	pluginNodePorts
	pluginNodeResourcesFit
	pluginPodTopologySpread
	pluginInterPodAffinity
	pluginVolumeBinding
	pluginDynamicResources
)

// code is a filter verdict, as kube-scheduler's framework codes it.
type code uint8

const (
	// codeUnschedulable: the node does not fit now; removing pods from it
	// (preemption) might help.
	codeUnschedulable code = iota + 1
	// codeUnresolvable (UnschedulableAndUnresolvable): preemption cannot
	// help on this node.
	codeUnresolvable
)

// status is why one node was rejected: a code, the plugin, and reasons
// worded as kube-scheduler words them.
type status struct {
	code    code
	plugin  plugin
	reasons []string
}

// Reasons, worded as kube-scheduler's filter plugins word them.
const (
	ReasonNodeUnschedulable         = "node(s) were unschedulable"
	ReasonNodeName                  = "node(s) didn't match the requested node name"
	ReasonUntoleratedTaint          = "node(s) had untolerated taint(s)"
	ReasonNodeAffinity              = "node(s) didn't match Pod's node affinity/selector"
	ReasonNodePorts                 = "node(s) didn't have free ports for the requested pod ports"
	ReasonTooManyPods               = "Too many pods"
	ReasonPodAffinity               = "node(s) didn't match pod affinity rules"
	ReasonPodAntiAffinity           = "node(s) didn't match pod anti-affinity rules"
	ReasonExistingPodsAntiAffinity  = "node(s) didn't satisfy existing pods anti-affinity rules"
	ReasonTopologySpread            = "node(s) didn't match pod topology spread constraints"
	ReasonTopologySpreadLabel       = "node(s) didn't match pod topology spread constraints (missing required label)"
	ReasonAffinityTermsConflict     = "pod affinity terms conflict"
	ReasonNoPreemptionVictims       = "No preemption victims found for incoming pod"
	ReasonPreemptionNotHelpful      = "Preemption is not helpful for scheduling"
	ReasonNotEligibleNeverPreempt   = "not eligible due to preemptionPolicy=Never."
	ReasonNotEligibleTerminating    = "not eligible due to a terminating pod on the nominated node."
	ReasonNoNodesAvailable          = "no nodes available to schedule pods"
	reasonDidNotSatisfyNodeAffinity = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
)

var (
	statusNodeUnschedulable = &status{codeUnresolvable, pluginNodeUnschedulable, []string{ReasonNodeUnschedulable}}
	statusNodeName          = &status{codeUnresolvable, pluginNodeName, []string{ReasonNodeName}}
	statusTaint             = &status{codeUnresolvable, pluginTaintToleration, []string{ReasonUntoleratedTaint}}
	statusNodeAffinity      = &status{codeUnresolvable, pluginNodeAffinity, []string{ReasonNodeAffinity}}
	statusNodePorts         = &status{codeUnschedulable, pluginNodePorts, []string{ReasonNodePorts}}
	statusPodAffinity       = &status{codeUnresolvable, pluginInterPodAffinity, []string{ReasonPodAffinity}}
	statusPodAntiAffinity   = &status{codeUnschedulable, pluginInterPodAffinity, []string{ReasonPodAntiAffinity}}
	statusExistingAnti      = &status{codeUnschedulable, pluginInterPodAffinity, []string{ReasonExistingPodsAntiAffinity}}
	statusSpread            = &status{codeUnschedulable, pluginPodTopologySpread, []string{ReasonTopologySpread}}
	statusSpreadLabel       = &status{codeUnresolvable, pluginPodTopologySpread, []string{ReasonTopologySpreadLabel}}
	statusNotPinned         = &status{codeUnresolvable, pluginNodeAffinity, []string{reasonDidNotSatisfyNodeAffinity}}
	statusTermsConflict     = &status{codeUnresolvable, pluginNodeAffinity, []string{ReasonAffinityTermsConflict}}
)

// unschedulableTaint is the taint a cordoned node is treated as having.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// topologyPair is a node label: a topology key and its value.
type topologyPair struct{ key, value string }

// cycleState is what one scheduling attempt precomputes before visiting
// the nodes (kube's PreFilter): the pod and, when pod (anti-)affinity is in
// play, the topology counts InterPodAffinity compares against.
type cycleState struct {
	pi *podInfo
	// affinityOn: InterPodAffinity has something to check.
	affinityOn bool
	// existingAnti counts, per topology pair, existing pods whose required
	// anti-affinity selects the incoming pod.
	existingAnti map[topologyPair]int
	// affinityCounts and antiCounts count existing pods matching the
	// incoming pod's affinity (all terms) and anti-affinity (each term).
	affinityCounts map[topologyPair]int
	antiCounts     map[topologyPair]int
	// volumes are the pod's claims, as VolumeBinding sees them; nil for a
	// pod without any.
	volumes *podVolumes
	// claims are the pod's ResourceClaims, as DynamicResources sees
	// them; nil for a pod without any.
	claims *podClaims
	// spread are the pod's DoNotSchedule topology spread constraints,
	// with the matching pods counted per domain.
	spread []spreadConstraint
}

// spreadConstraint is a DoNotSchedule topology spread constraint and the
// count of matching pods in each domain of the eligible nodes.
type spreadConstraint struct {
	key       string
	maxSkew   int
	selector  labels.Selector
	selfMatch int
	counts    map[string]int
	// min is the smallest count over the domains (zero when there are
	// fewer domains than minDomains).
	min int
}

// preFilter builds the cycle state for pi from the cache. It visits
// groups of alike pods (see podGroup), not pods.
func (c *cache) preFilter(pi *podInfo) *cycleState {
	st := &cycleState{pi: pi}
	if len(pi.pod.Spec.TopologySpreadConstraints) > 0 {
		st.spread = c.spreadCounts(pi)
	}
	if len(c.antiTerms) == 0 && len(pi.affinity) == 0 && len(pi.antiAffinity) == 0 {
		return st
	}
	pod := pi.pod
	podLabels := labels.Set(pod.Labels)
	var podNSLabels labels.Set
	nsLoaded := false
	podNS := func() labels.Set {
		if !nsLoaded {
			podNSLabels, nsLoaded = c.nsLabels(pod.Namespace), true
		}
		return podNSLabels
	}
	count := func(m *map[topologyPair]int, key string, g *podGroup) {
		for node, k := range g.nodes {
			n := c.nodes[node]
			if n == nil || n.node == nil {
				continue
			}
			if v, ok := n.labels[key]; ok {
				if *m == nil {
					*m = map[topologyPair]int{}
				}
				(*m)[topologyPair{key, v}] += k
			}
		}
	}
	for _, g := range c.antiTerms {
		if termSelects(g.term, pod.Namespace, podLabels, podNS) {
			count(&st.existingAnti, g.term.topologyKey, g)
		}
	}
	if len(pi.affinity) > 0 || len(pi.antiAffinity) > 0 {
		for _, g := range c.byLabels {
			var nsLabels labels.Set
			loaded := false
			groupNS := func() labels.Set {
				if !loaded {
					nsLabels, loaded = c.nsLabels(g.namespace), true
				}
				return nsLabels
			}
			if len(pi.affinity) > 0 && allTermsSelect(pi.affinity, g.namespace, g.labels, groupNS) {
				for i := range pi.affinity {
					count(&st.affinityCounts, pi.affinity[i].topologyKey, g)
				}
			}
			for i := range pi.antiAffinity {
				t := &pi.antiAffinity[i]
				if termSelects(t, g.namespace, g.labels, groupNS) {
					count(&st.antiCounts, t.topologyKey, g)
				}
			}
		}
	}
	st.affinityOn = len(st.existingAnti) > 0 || len(pi.affinity) > 0 || len(pi.antiAffinity) > 0
	return st
}

// termSelects tells whether t selects pods of namespace ns with labels
// set; nsLabels returns the namespace's labels, for a namespaceSelector.
func termSelects(t *affinityTerm, ns string, set labels.Set, nsLabels func() labels.Set) bool {
	if !t.namespaces.Has(ns) && (t.nsSelector == nil || !t.nsSelector.Matches(nsLabels())) {
		return false
	}
	return t.selector.Matches(set)
}

func allTermsSelect(terms []affinityTerm, ns string, set labels.Set, nsLabels func() labels.Set) bool {
	for i := range terms {
		if !termSelects(&terms[i], ns, set, nsLabels) {
			return false
		}
	}
	return true
}

// filter runs the filters on one node in kube-scheduler's default order
// (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit, VolumeBinding, PodTopologySpread, InterPodAffinity,
// DynamicResources) and returns the
// first rejection, or nil when the node fits.
func filter(st *cycleState, n *nodeInfo) *status {
	pi := st.pi
	pod := pi.pod
	if n.unschedulable && !podutil.ToleratesTaint(pod.Spec.Tolerations, &unschedulableTaint) {
		return statusNodeUnschedulable
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != n.name {
		return statusNodeName
	}
	for i := range n.taints {
		if !podutil.ToleratesTaint(pod.Spec.Tolerations, &n.taints[i]) {
			return statusTaint
		}
	}
	if !matchesNodeSelectorAndAffinity(pi, n) {
		return statusNodeAffinity
	}
	if len(pi.ports) > 0 && portsConflict(pi.ports, n.ports) {
		return statusNodePorts
	}
	if s := fitsResources(pi, n); s != nil {
		return s
	}
	if st.volumes != nil {
		if s := st.volumes.filter(n); s != nil {
			return s
		}
	}
	if len(st.spread) > 0 {
		if s := topologySpread(st, n); s != nil {
			return s
		}
	}
	if st.affinityOn {
		if s := interPodAffinity(st, n); s != nil {
			return s
		}
	}
	if st.claims != nil {
		if s := st.claims.filter(n); s != nil {
			return s
		}
	}
	return nil
}

// matchesNodeSelectorAndAffinity is NodeAffinity's filter: the pod's
// nodeSelector and its required node affinity must both hold.
func matchesNodeSelectorAndAffinity(pi *podInfo, n *nodeInfo) bool {
	if n.node == nil {
		return false
	}
	ok, _ := pi.required.Match(n.node)
	return ok
}

func portsConflict(want, used []hostPort) bool {
	for _, w := range want {
		for _, u := range used {
			if w.conflicts(u) {
				return true
			}
		}
	}
	return false
}

// fitsResources is NodeResourcesFit's filter: the pod count, then cpu,
// memory, ephemeral storage and scalar resources against allocatable minus
// what assigned pods request. A request larger than the whole node is
// unresolvable: preemption cannot make room for it.
func fitsResources(pi *podInfo, n *nodeInfo) *status {
	var reasons []string
	unresolvable := false
	if int64(len(n.pods))+1 > n.allowedPods {
		reasons = append(reasons, ReasonTooManyPods)
	}
	r := &pi.req
	if r.milliCPU == 0 && r.memory == 0 && r.ephemeral == 0 && len(r.scalar) == 0 {
		return resourceStatus(reasons, false)
	}
	a, u := &n.allocatable, &n.requested
	if r.milliCPU > 0 && r.milliCPU > a.milliCPU-u.milliCPU {
		reasons = append(reasons, "Insufficient cpu")
		unresolvable = unresolvable || r.milliCPU > a.milliCPU
	}
	if r.memory > 0 && r.memory > a.memory-u.memory {
		reasons = append(reasons, "Insufficient memory")
		unresolvable = unresolvable || r.memory > a.memory
	}
	if r.ephemeral > 0 && r.ephemeral > a.ephemeral-u.ephemeral {
		reasons = append(reasons, "Insufficient ephemeral-storage")
		unresolvable = unresolvable || r.ephemeral > a.ephemeral
	}
	if len(r.scalar) > 0 {
		names := make([]string, 0, len(r.scalar))
		for name := range r.scalar {
			names = append(names, string(name))
		}
		sort.Strings(names)
		for _, name := range names {
			rn := corev1.ResourceName(name)
			q := r.scalar[rn]
			if q == 0 {
				continue
			}
			if q > a.scalar[rn]-u.scalar[rn] {
				reasons = append(reasons, "Insufficient "+name)
				unresolvable = unresolvable || q > a.scalar[rn]
			}
		}
	}
	return resourceStatus(reasons, unresolvable)
}

func resourceStatus(reasons []string, unresolvable bool) *status {
	if len(reasons) == 0 {
		return nil
	}
	c := codeUnschedulable
	if unresolvable {
		c = codeUnresolvable
	}
	return &status{code: c, plugin: pluginNodeResourcesFit, reasons: reasons}
}

// interPodAffinity is InterPodAffinity's filter: the pod's required
// affinity, its required anti-affinity, then the existing pods'
// anti-affinity.
func interPodAffinity(st *cycleState, n *nodeInfo) *status {
	pi := st.pi
	if len(pi.affinity) > 0 {
		exist := true
		for i := range pi.affinity {
			t := &pi.affinity[i]
			v, ok := n.labels[t.topologyKey]
			if !ok {
				return statusPodAffinity
			}
			if st.affinityCounts[topologyPair{t.topologyKey, v}] <= 0 {
				exist = false
			}
		}
		// The first pod of a group with affinity to itself goes anywhere
		// that has the topology labels.
		if !exist && !(len(st.affinityCounts) == 0 && allTermsSelect(pi.affinity, pi.pod.Namespace, labels.Set(pi.pod.Labels), func() labels.Set { return nil })) {
			return statusPodAffinity
		}
	}
	if len(st.antiCounts) > 0 {
		for i := range pi.antiAffinity {
			t := &pi.antiAffinity[i]
			if v, ok := n.labels[t.topologyKey]; ok && st.antiCounts[topologyPair{t.topologyKey, v}] > 0 {
				return statusPodAntiAffinity
			}
		}
	}
	if len(st.existingAnti) > 0 {
		for k, v := range n.labels {
			if st.existingAnti[topologyPair{k, v}] > 0 {
				return statusExistingAnti
			}
		}
	}
	return nil
}

// spreadCounts is PodTopologySpread's PreFilter for the pod's DoNotSchedule
// constraints: over the nodes that count (those with every constraint's
// topology key that, by the default policies, satisfy the pod's node
// affinity; taints are ignored unless nodeTaintsPolicy is Honor), it counts
// per domain the pods of the pod's namespace that each selector matches.
func (c *cache) spreadCounts(pi *podInfo) []spreadConstraint {
	pod := pi.pod
	var out []spreadConstraint
	honorTaints := false
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector)
		if err != nil {
			continue
		}
		for _, k := range tsc.MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				if r, err := labels.NewRequirement(k, selection.In, []string{v}); err == nil {
					sel = sel.Add(*r)
				}
			}
		}
		sc := spreadConstraint{key: tsc.TopologyKey, maxSkew: int(tsc.MaxSkew), selector: sel, counts: map[string]int{}}
		if sel.Matches(labels.Set(pod.Labels)) {
			sc.selfMatch = 1
		}
		if tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
			honorTaints = true
		}
		out = append(out, sc)
	}
	if len(out) == 0 {
		return nil
	}
	ignoreAffinity := false
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.NodeAffinityPolicy != nil && *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyIgnore {
			ignoreAffinity = true
		}
	}
	eligible := make(map[string]*nodeInfo, len(c.list))
	for _, n := range c.list {
		if !ignoreAffinity && !matchesNodeSelectorAndAffinity(pi, n) {
			continue
		}
		if honorTaints && untolerated(pod, n) {
			continue
		}
		hasAll := true
		for i := range out {
			if _, ok := n.labels[out[i].key]; !ok {
				hasAll = false
				break
			}
		}
		if !hasAll {
			continue
		}
		eligible[n.name] = n
		for i := range out {
			out[i].counts[n.labels[out[i].key]] += 0
		}
	}
	for _, g := range c.byLabels {
		if g.namespace != pod.Namespace {
			continue
		}
		for i := range out {
			if !out[i].selector.Matches(g.labels) {
				continue
			}
			for node, k := range g.nodes {
				if n := eligible[node]; n != nil {
					out[i].counts[n.labels[out[i].key]] += k
				}
			}
		}
	}
	k := 0
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		sc := &out[k]
		k++
		minDomains := 1
		if tsc.MinDomains != nil {
			minDomains = int(*tsc.MinDomains)
		}
		sc.min = -1
		for _, v := range sc.counts {
			if sc.min < 0 || v < sc.min {
				sc.min = v
			}
		}
		if sc.min < 0 || len(sc.counts) < minDomains {
			sc.min = 0
		}
	}
	return out
}

func untolerated(pod *corev1.Pod, n *nodeInfo) bool {
	for i := range n.taints {
		if !podutil.ToleratesTaint(pod.Spec.Tolerations, &n.taints[i]) {
			return true
		}
	}
	return false
}

// topologySpread is PodTopologySpread's filter: placing the pod on n must
// not make its domain exceed the least populated one by more than maxSkew.
func topologySpread(st *cycleState, n *nodeInfo) *status {
	for i := range st.spread {
		sc := &st.spread[i]
		v, ok := n.labels[sc.key]
		if !ok {
			return statusSpreadLabel
		}
		if sc.counts[v]+sc.selfMatch-sc.min > sc.maxSkew {
			return statusSpread
		}
	}
	return nil
}
