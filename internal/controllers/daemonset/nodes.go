package daemonset

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// nodeNameField is the node field a daemon pod's affinity pins it with.
const nodeNameField = "metadata.name"

// daemonTolerations are the tolerations kube's DaemonSet controller adds
// to every daemon pod: daemons stay on nodes that are not ready or
// unreachable, and are placed on nodes under resource pressure or cordoned.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// hostNetworkToleration is added to pods on the host network, which do not
// need the node's pod network.
var hostNetworkToleration = corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// addDaemonTolerations adds the daemon tolerations spec lacks.
func addDaemonTolerations(spec *corev1.PodSpec) {
	want := daemonTolerations
	if spec.HostNetwork {
		want = append(append([]corev1.Toleration(nil), want...), hostNetworkToleration)
	}
	for _, t := range want {
		found := false
		for i := range spec.Tolerations {
			if have := spec.Tolerations[i]; have.Key == t.Key && have.Effect == t.Effect {
				spec.Tolerations[i] = t
				found = true
				break
			}
		}
		if !found {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
}

// pinToNode replaces the pod's required node affinity with one selecting
// the node by name (the node satisfies the original affinity already).
func pinToNode(spec *corev1.PodSpec, node string) {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}},
	}
}

// targetNode returns the node a daemon pod runs on or is pinned to.
func targetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == nodeNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// shouldRun tells whether a DaemonSet's pod should be placed on node
// (selector, affinity and every NoSchedule and NoExecute taint tolerated)
// and whether one there should keep running (NoExecute taints only), as
// kube's NodeShouldRunDaemonPod.
func shouldRun(ds *appsv1.DaemonSet, node *corev1.Node) (run, keep bool) {
	spec := ds.Spec.Template.Spec.DeepCopy()
	addDaemonTolerations(spec)
	if !fitsNode(spec, node) {
		return false, false
	}
	run, keep = true, true
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if tolerated(spec.Tolerations, taint) {
			continue
		}
		run = false
		if taint.Effect == corev1.TaintEffectNoExecute {
			keep = false
		}
	}
	return run, keep
}

// fitsNode checks the pod's node selector and required node affinity.
func fitsNode(spec *corev1.PodSpec, node *corev1.Node) bool {
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(node.Labels)) {
		return false
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(t, node) {
			return true
		}
	}
	return false
}

// termMatches tells whether a node selector term selects node; a term
// with no requirements selects nothing.
func termMatches(t corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(t.MatchExpressions)+len(t.MatchFields) == 0 {
		return false
	}
	if !requirementsMatch(t.MatchExpressions, labels.Set(node.Labels)) {
		return false
	}
	return requirementsMatch(t.MatchFields, labels.Set{nodeNameField: node.Name})
}

var operators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

func requirementsMatch(reqs []corev1.NodeSelectorRequirement, set labels.Set) bool {
	for _, r := range reqs {
		op, ok := operators[r.Operator]
		if !ok {
			return false
		}
		req, err := labels.NewRequirement(r.Key, op, r.Values)
		if err != nil || !req.Matches(set) {
			return false
		}
	}
	return true
}

// tolerated tells whether some toleration tolerates taint.
func tolerated(tols []corev1.Toleration, taint *corev1.Taint) bool {
	for _, t := range tols {
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			return true
		case "", corev1.TolerationOpEqual:
			if t.Value == taint.Value {
				return true
			}
		}
	}
	return false
}

// newPod builds the daemon pod of node: the template with the revision
// labels, the daemon tolerations and the affinity pinning it to node.
func newPod(ds *appsv1.DaemonSet, node, hash string) *corev1.Pod {
	t := &ds.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    podPrefix(ds.Name),
			Namespace:       ds.Namespace,
			Labels:          map[string]string{},
			Annotations:     t.Annotations,
			Finalizers:      append([]string(nil), t.Finalizers...),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	for k, v := range t.Labels {
		pod.Labels[k] = v
	}
	pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	addDaemonTolerations(&pod.Spec)
	pinToNode(&pod.Spec, node)
	return pod
}

func podPrefix(name string) string {
	if strings.HasSuffix(name, "-") {
		return name
	}
	return name + "-"
}
