package disruption_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/disruption"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

const ns = "default"

func createPDB(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, app string, spec policyv1.PodDisruptionBudgetSpec) {
	t.Helper()
	spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitStatus waits for the budget's status to satisfy ok and returns it.
func waitStatus(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, what string, ok func(*policyv1.PodDisruptionBudget) bool) *policyv1.PodDisruptionBudget {
	t.Helper()
	var pdb *policyv1.PodDisruptionBudget
	ctrltest.Wait(t, what, func() bool {
		var err error
		pdb, err = cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && ok(pdb)
	})
	return pdb
}

func counts(pdb *policyv1.PodDisruptionBudget) string {
	s := pdb.Status
	return fmt.Sprintf("expected=%d healthy=%d desired=%d allowed=%d", s.ExpectedPods, s.CurrentHealthy, s.DesiredHealthy, s.DisruptionsAllowed)
}

func TestBudgetStatus(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{disruption.Name, "deployment", replicaset.Name}, Scheduler: true, Nodes: 1,
	})
	cs := srv.Client(t)
	ctx := t.Context()
	replicas := int32(3)
	labels := map[string]string{"app": "web"}
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("minAvailable 2 over 3 ready pods allows one disruption", func(t *testing.T) {
		two := intstr.FromInt32(2)
		createPDB(ctx, t, cs, "web-min", "web", policyv1.PodDisruptionBudgetSpec{MinAvailable: &two})
		pdb := waitStatus(ctx, t, cs, "web-min", "web-min allows one disruption", func(p *policyv1.PodDisruptionBudget) bool {
			return counts(p) == "expected=3 healthy=3 desired=2 allowed=1"
		})
		if pdb.Status.ObservedGeneration != pdb.Generation {
			t.Errorf("observedGeneration = %d, want %d", pdb.Status.ObservedGeneration, pdb.Generation)
		}
		c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != policyv1.SufficientPodsReason {
			t.Errorf("DisruptionAllowed = %+v", c)
		}
	})

	t.Run("maxUnavailable counts the Deployment's scale", func(t *testing.T) {
		one := intstr.FromString("34%")
		createPDB(ctx, t, cs, "web-max", "web", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one})
		waitStatus(ctx, t, cs, "web-max", "web-max allows two disruptions", func(p *policyv1.PodDisruptionBudget) bool {
			return counts(p) == "expected=3 healthy=3 desired=1 allowed=2"
		})
	})

	t.Run("minAvailable above the healthy pods allows none", func(t *testing.T) {
		four := intstr.FromInt32(4)
		createPDB(ctx, t, cs, "web-four", "web", policyv1.PodDisruptionBudgetSpec{MinAvailable: &four})
		pdb := waitStatus(ctx, t, cs, "web-four", "web-four computed", func(p *policyv1.PodDisruptionBudget) bool {
			return counts(p) == "expected=3 healthy=3 desired=4 allowed=0"
		})
		c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != policyv1.InsufficientPodsReason {
			t.Errorf("DisruptionAllowed = %+v", c)
		}
	})

	t.Run("stale disruptedPods entries are cleared", func(t *testing.T) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web-min", metav1.GetOptions{})
			if err != nil {
				return err
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil || len(pods.Items) == 0 {
				return fmt.Errorf("list pods: %v (%d)", err, len(pods.Items))
			}
			pdb.Status.DisruptedPods = map[string]metav1.Time{pods.Items[0].Name: metav1.NewTime(time.Now().Add(-3 * time.Minute).Truncate(time.Second))}
			_, err = cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(ctx, t, cs, "web-min", "the stale entry gone", func(p *policyv1.PodDisruptionBudget) bool {
			return len(p.Status.DisruptedPods) == 0 && counts(p) == "expected=3 healthy=3 desired=2 allowed=1"
		})
	})

	t.Run("a pod whose controller is gone fails the sync safe", func(t *testing.T) {
		yes := true
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "ghost-1", Labels: map[string]string{"app": "ghost"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "ghost", UID: "0000-ghost", Controller: &yes}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		one := intstr.FromInt32(1)
		createPDB(ctx, t, cs, "ghost", "ghost", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one})
		pdb := waitStatus(ctx, t, cs, "ghost", "ghost fail-safe", func(p *policyv1.PodDisruptionBudget) bool {
			return apimeta.FindStatusCondition(p.Status.Conditions, policyv1.DisruptionAllowedCondition) != nil
		})
		c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
		if c.Status != metav1.ConditionFalse || c.Reason != policyv1.SyncFailedReason || c.Message != `found no controllers for pod "ghost-1"` {
			t.Errorf("DisruptionAllowed = %+v", c)
		}
		if pdb.Status.DisruptionsAllowed != 0 {
			t.Errorf("disruptionsAllowed = %d, want 0", pdb.Status.DisruptionsAllowed)
		}
	})
}
