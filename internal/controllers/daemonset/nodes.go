package daemonset

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"minik/internal/podutil"
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

// shouldRun tells whether a DaemonSet's pod should be placed on node and
// whether one there should keep running, as kube's NodeShouldRunDaemonPod:
// the template's nodeName and required node affinity (with its
// nodeSelector) must admit the node, and every NoSchedule and NoExecute
// taint be tolerated to run there; a pod already there keeps running while
// its NoExecute taints are tolerated.
func shouldRun(ds *appsv1.DaemonSet, node *corev1.Node) (run, keep bool) {
	spec := ds.Spec.Template.Spec.DeepCopy()
	addDaemonTolerations(spec)
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, false
	}
	if fits, _ := nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity).Match(node); !fits {
		return false, false
	}
	if _, untolerated := podutil.FindUntoleratedTaint(node.Spec.Taints, spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}); !untolerated {
		return true, true
	}
	_, evicted := podutil.FindUntoleratedTaint(node.Spec.Taints, spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute
	})
	return false, !evicted
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
