package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// evictionPod creates a pod labelled app=web bound to node-1, Running
// and Ready unless pending.
func evictionPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, pending bool) *corev1.Pod {
	t.Helper()
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !pending {
		if err := ctrltest.MarkPodReady(ctx, cs, pod, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return pod
}

// budget creates a PodDisruptionBudget over app=web and gives it the
// status a disruption controller would have computed.
func budget(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, allowed, healthy int32) *policyv1.PodDisruptionBudget {
	t.Helper()
	min := intstr.FromInt32(1)
	pdb, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &min, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed, CurrentHealthy: healthy, DesiredHealthy: 1, ExpectedPods: healthy,
	}
	if pdb, err = cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pdb
}

func evict(ctx context.Context, cs kubernetes.Interface, ns, name string, opts *metav1.DeleteOptions) error {
	return cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, DeleteOptions: opts})
}

func TestEviction(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	ctx := t.Context()

	t.Run("discovery advertises pods/eviction as policy/v1 Eviction", func(t *testing.T) {
		list, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if r.Name == "pods/eviction" {
				if r.Group != "policy" || r.Version != "v1" || r.Kind != "Eviction" || len(r.Verbs) != 1 || r.Verbs[0] != "create" {
					t.Errorf("pods/eviction = %+v", r)
				}
				return
			}
		}
		t.Error("pods/eviction not in discovery")
	})

	t.Run("a budget allowing no disruption refuses with kube's 429", func(t *testing.T) {
		namespace(t, cs, "refused")
		evictionPod(ctx, t, cs, "refused", "web-1", false)
		budget(ctx, t, cs, "refused", "web", 0, 1)
		err := evict(ctx, cs, "refused", "web-1", nil)
		var status apierrors.APIStatus
		if !apierrors.IsTooManyRequests(err) || !errors.As(err, &status) {
			t.Fatalf("evict = %v, want 429", err)
		}
		st := status.Status()
		if st.Code != http.StatusTooManyRequests || st.Message != "Cannot evict pod as it would violate the pod's disruption budget." {
			t.Errorf("status = %d %q", st.Code, st.Message)
		}
		if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause ||
			st.Details.Causes[0].Message != "The disruption budget web needs 1 healthy pods and has 1 currently" {
			t.Errorf("details = %+v", st.Details)
		}
		if p, err := cs.CoreV1().Pods("refused").Get(ctx, "web-1", metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
			t.Errorf("pod after refused eviction: %v, deleting %v", err, p.DeletionTimestamp)
		}
	})

	t.Run("an allowed eviction spends a disruption, marks and deletes the pod", func(t *testing.T) {
		namespace(t, cs, "allowed")
		evictionPod(ctx, t, cs, "allowed", "web-1", false)
		evictionPod(ctx, t, cs, "allowed", "web-2", false)
		budget(ctx, t, cs, "allowed", "web", 1, 2)
		if err := evict(ctx, cs, "allowed", "web-1", &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry-run evict: %v", err)
		}
		pdb, _ := cs.PolicyV1().PodDisruptionBudgets("allowed").Get(ctx, "web", metav1.GetOptions{})
		if pdb.Status.DisruptionsAllowed != 1 || len(pdb.Status.DisruptedPods) != 0 {
			t.Errorf("a dry run changed the budget: %+v", pdb.Status)
		}
		if err := evict(ctx, cs, "allowed", "web-1", &metav1.DeleteOptions{GracePeriodSeconds: new(int64(30))}); err != nil {
			t.Fatalf("evict: %v", err)
		}
		pod, err := cs.CoreV1().Pods("allowed").Get(ctx, "web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.DeletionTimestamp == nil {
			t.Error("the evicted pod is not being deleted")
		}
		var cond *corev1.PodCondition
		for i := range pod.Status.Conditions {
			if pod.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &pod.Status.Conditions[i]
			}
		}
		if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "EvictionByEvictionAPI" || cond.Message != "Eviction API: evicting" {
			t.Errorf("DisruptionTarget = %+v", cond)
		}
		pdb, _ = cs.PolicyV1().PodDisruptionBudgets("allowed").Get(ctx, "web", metav1.GetOptions{})
		if pdb.Status.DisruptionsAllowed != 0 {
			t.Errorf("disruptionsAllowed = %d, want 0", pdb.Status.DisruptionsAllowed)
		}
		if _, ok := pdb.Status.DisruptedPods["web-1"]; !ok {
			t.Errorf("disruptedPods = %v, want web-1", pdb.Status.DisruptedPods)
		}
		if c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != policyv1.InsufficientPodsReason {
			t.Errorf("DisruptionAllowed = %+v", c)
		}
		if err := evict(ctx, cs, "allowed", "web-2", nil); !apierrors.IsTooManyRequests(err) {
			t.Errorf("second eviction = %v, want 429", err)
		}
	})

	t.Run("a pending pod is evicted whatever its budget", func(t *testing.T) {
		namespace(t, cs, "pending")
		evictionPod(ctx, t, cs, "pending", "web-1", true)
		budget(ctx, t, cs, "pending", "web", 0, 0)
		if err := evict(ctx, cs, "pending", "web-1", &metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
			t.Fatalf("evict: %v", err)
		}
		if _, err := cs.CoreV1().Pods("pending").Get(ctx, "web-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod after eviction: %v, want not found", err)
		}
	})

	t.Run("a pod under two budgets is refused with a 500", func(t *testing.T) {
		namespace(t, cs, "two")
		evictionPod(ctx, t, cs, "two", "web-1", false)
		budget(ctx, t, cs, "two", "web-a", 1, 1)
		budget(ctx, t, cs, "two", "web-b", 1, 1)
		err := evict(ctx, cs, "two", "web-1", nil)
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code != http.StatusInternalServerError {
			t.Fatalf("evict = %v, want 500", err)
		}
		if err == nil || err.Error() != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
			t.Errorf("evict = %v", err)
		}
	})

	t.Run("the name in the URL must match the Eviction's", func(t *testing.T) {
		err := cs.CoreV1().RESTClient().Post().Namespace("two").Resource("pods").Name("web-1").SubResource("eviction").
			Body(&policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"}, ObjectMeta: metav1.ObjectMeta{Name: "other"}}).Do(ctx).Error()
		if !apierrors.IsBadRequest(err) || err.Error() != "name in URL does not match name in Eviction object" {
			t.Errorf("evict = %v", err)
		}
	})
}
