package nodelifecycle

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTaintsFollowReadiness(t *testing.T) {
	now := time.Now()
	earlier := metav1.NewTime(now.Add(-time.Hour))
	node := func(ready corev1.ConditionStatus, unschedulable bool, taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: unschedulable, Taints: taints}}
		if ready != "" {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
		}
		return n
	}
	user := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	unreachableExec := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &earlier}
	for _, tc := range []struct {
		name    string
		node    *corev1.Node
		want    []string
		changed bool
	}{
		{"a ready node has none", node(corev1.ConditionTrue, false), nil, false},
		{"an unknown node is unreachable", node(corev1.ConditionUnknown, false), []string{"node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"}, true},
		{"a not-ready node is not-ready", node(corev1.ConditionFalse, false), []string{"node.kubernetes.io/not-ready:NoSchedule", "node.kubernetes.io/not-ready:NoExecute"}, true},
		{"others' taints stay when the node recovers", node(corev1.ConditionTrue, false, user, unreachableExec), []string{"dedicated:NoSchedule"}, true},
		{"a taint already there keeps its time", node(corev1.ConditionUnknown, false, unreachableExec, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}), []string{"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}, false},
		{"an unschedulable node is tainted so", node(corev1.ConditionTrue, true), []string{"node.kubernetes.io/unschedulable:NoSchedule"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := taintsFor(tc.node, now)
			var keys []string
			for _, tt := range got {
				keys = append(keys, tt.Key+":"+string(tt.Effect))
				if tt.Key == corev1.TaintNodeUnreachable && tt.Effect == corev1.TaintEffectNoExecute && tt.TimeAdded == nil {
					t.Errorf("NoExecute taint without timeAdded")
				}
			}
			if len(keys) != len(tc.want) || changed != tc.changed {
				t.Fatalf("got %v changed %v, want %v changed %v", keys, changed, tc.want, tc.changed)
			}
			for i := range keys {
				if keys[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", keys, tc.want)
				}
			}
		})
	}
}
