package replicaset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A ReplicationController converted to the ReplicaSet the sync loop works
// on and back is the same object, conditions and all.
func TestReplicationControllerConversionRoundTrips(t *testing.T) {
	replicas := int32(3)
	rc := &corev1.ReplicationController{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", UID: "u1", ResourceVersion: "7", Generation: 2},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &replicas, MinReadySeconds: 5, Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}},
		},
		Status: corev1.ReplicationControllerStatus{
			Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 2,
			Conditions: []corev1.ReplicationControllerCondition{{
				Type: corev1.ReplicationControllerReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "quota",
			}},
		},
	}
	rs := rcToRS(rc)
	if sel := rs.Spec.Selector; sel == nil || sel.MatchLabels["app"] != "web" || len(sel.MatchExpressions) != 0 {
		t.Errorf("selector %v; want matchLabels app=web", sel)
	}
	if got := rsToRC(rs); !apiequality.Semantic.DeepEqual(got, rc) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, rc)
	}
}
