package daemonset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestShouldRunAgreesWithTheScheduler checks the DaemonSet controller's
// placement against nodes' taints and labels. Lt and Gt tolerations count
// here as in the scheduler: a controller that ignored them refused nodes
// where the scheduler would bind its pods.
func TestShouldRunAgreesWithTheScheduler(t *testing.T) {
	tier := func(v string, effect corev1.TaintEffect) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "node-" + v, Labels: map[string]string{"zone": "a", "cores": "32"}},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "tier", Value: v, Effect: effect}}},
		}
	}
	ds := func(spec corev1.PodSpec) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: spec}}}
	}
	tolerate := func(op corev1.TolerationOperator, v string) corev1.PodSpec {
		return corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "tier", Operator: op, Value: v}}}
	}
	tests := []struct {
		name              string
		ds                *appsv1.DaemonSet
		node              *corev1.Node
		wantRun, wantKeep bool
	}{
		{"a pod tolerating the taint's value through Gt runs on the tainted node", ds(tolerate(corev1.TolerationOpGt, "3")), tier("5", corev1.TaintEffectNoSchedule), true, true},
		{"a pod tolerating the taint's value through Lt runs on the tainted node", ds(tolerate(corev1.TolerationOpLt, "9")), tier("5", corev1.TaintEffectNoExecute), true, true},
		{"Gt does not tolerate a smaller value", ds(tolerate(corev1.TolerationOpGt, "7")), tier("5", corev1.TaintEffectNoSchedule), false, true},
		{"an untolerated NoExecute taint neither places nor keeps a pod", ds(tolerate(corev1.TolerationOpGt, "7")), tier("5", corev1.TaintEffectNoExecute), false, false},
		{"Equal compares the values", ds(tolerate(corev1.TolerationOpEqual, "5")), tier("5", corev1.TaintEffectNoSchedule), true, true},
		{"a PreferNoSchedule taint does not keep a pod away", ds(corev1.PodSpec{}), tier("5", corev1.TaintEffectPreferNoSchedule), true, true},
		{"a nodeSelector the labels do not satisfy refuses the node", ds(corev1.PodSpec{NodeSelector: map[string]string{"zone": "b"}}), tier("5", corev1.TaintEffectPreferNoSchedule), false, false},
		{"required node affinity with Gt compares integers", ds(corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cores", Operator: corev1.NodeSelectorOpGt, Values: []string{"16"}}},
			}}},
		}}}), tier("5", corev1.TaintEffectPreferNoSchedule), true, true},
		{"an empty node selector term selects no node", ds(corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}},
		}}}), tier("5", corev1.TaintEffectPreferNoSchedule), false, false},
		{"a template naming another node refuses this one", ds(corev1.PodSpec{NodeName: "elsewhere"}), tier("5", corev1.TaintEffectPreferNoSchedule), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, keep := shouldRun(tc.ds, tc.node)
			if run != tc.wantRun || keep != tc.wantKeep {
				t.Errorf("shouldRun = run %v keep %v, want run %v keep %v", run, keep, tc.wantRun, tc.wantKeep)
			}
		})
	}
}
