package tables

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func podDisruptionBudgetFixtures() []runtime.Object {
	return []runtime.Object{
		&policyv1.PodDisruptionBudget{
			ObjectMeta: objMeta("web", 5*time.Minute),
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(2))},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3},
		},
		&policyv1.PodDisruptionBudget{
			ObjectMeta: objMeta("api", 2*24*time.Hour),
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptrTo(intstr.FromString("25%"))},
		},
	}
}
