package plugins_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// TestPriorityClassesAndThePriorityPlugin serves PriorityClasses on a real
// server and runs pods through the Priority plugin.
func TestPriorityClassesAndThePriorityPlugin(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	pcs := cs.SchedulingV1().PriorityClasses()
	createNamespace(ctx, t, cs, "demo")

	t.Run("the system classes exist from the start", func(t *testing.T) {
		for name, value := range map[string]int32{"system-cluster-critical": 2000000000, "system-node-critical": 2000001000} {
			pc, err := pcs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pc.Value != value || pc.GlobalDefault || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
				t.Errorf("%s = value %d, globalDefault %v, policy %v", name, pc.Value, pc.GlobalDefault, pc.PreemptionPolicy)
			}
		}
	})
	t.Run("a system class cannot be deleted", func(t *testing.T) {
		err := pcs.Delete(ctx, "system-node-critical", metav1.DeleteOptions{})
		want := `priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a user class above a billion is invalid", func(t *testing.T) {
		_, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "huge"}, Value: 1000000001}, metav1.CreateOptions{})
		want := `PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})

	high, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, Description: "important"}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a class's value is immutable", func(t *testing.T) {
		upd := high.DeepCopy()
		upd.Value = 2000
		_, err := pcs.Update(ctx, upd, metav1.UpdateOptions{})
		want := `PriorityClass.scheduling.k8s.io "high" is invalid: value: Forbidden: may not be changed in an update.`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})

	t.Run("a pod gets its class's priority and policy", func(t *testing.T) {
		p := pod("vip", nil, nil)
		p.Spec.PriorityClassName = "high"
		got, err := cs.CoreV1().Pods("demo").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Priority == nil || *got.Spec.Priority != 1000 || got.Spec.PreemptionPolicy == nil || *got.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
			t.Errorf("priority %v policy %v, want 1000 PreemptLowerPriority", got.Spec.Priority, got.Spec.PreemptionPolicy)
		}
	})
	t.Run("a pod naming an unknown class is refused", func(t *testing.T) {
		p := pod("lost", nil, nil)
		p.Spec.PriorityClassName = "foo"
		_, err := cs.CoreV1().Pods("demo").Create(ctx, p, metav1.CreateOptions{})
		want := `pods "lost" is forbidden: no PriorityClass with name foo was found`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a pod setting another priority than its class's is refused", func(t *testing.T) {
		p := pod("sneaky", nil, nil)
		p.Spec.PriorityClassName = "high"
		p.Spec.Priority = new(int32(5))
		_, err := cs.CoreV1().Pods("demo").Create(ctx, p, metav1.CreateOptions{})
		want := `pods "sneaky" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a pod naming no class gets priority 0 while there is no default", func(t *testing.T) {
		got, err := cs.CoreV1().Pods("demo").Create(ctx, pod("plain", nil, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Priority == nil || *got.Spec.Priority != 0 || got.Spec.PriorityClassName != "" || *got.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
			t.Errorf("class %q priority %v policy %v", got.Spec.PriorityClassName, got.Spec.Priority, got.Spec.PreemptionPolicy)
		}
	})

	never := corev1.PreemptNever
	if _, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: -5, GlobalDefault: true, PreemptionPolicy: &never}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the global default in the admission cache", func() bool {
		p, err := cs.CoreV1().Pods("demo").Create(ctx, pod("probe", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && p.Spec.PriorityClassName == "batch"
	})
	t.Run("a pod naming no class gets the global default", func(t *testing.T) {
		got, err := cs.CoreV1().Pods("demo").Create(ctx, pod("defaulted", nil, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.PriorityClassName != "batch" || *got.Spec.Priority != -5 || *got.Spec.PreemptionPolicy != corev1.PreemptNever {
			t.Errorf("class %q priority %v policy %v, want batch -5 Never", got.Spec.PriorityClassName, *got.Spec.Priority, *got.Spec.PreemptionPolicy)
		}
	})
	t.Run("a pod setting another preemption policy than its class's is refused", func(t *testing.T) {
		p := pod("eager", nil, nil)
		p.Spec.PreemptionPolicy = new(corev1.PreemptLowerPriority)
		_, err := cs.CoreV1().Pods("demo").Create(ctx, p, metav1.CreateOptions{})
		want := `pods "eager" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("only one class may be the global default", func(t *testing.T) {
		_, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "other-default"}, Value: 1, GlobalDefault: true}, metav1.CreateOptions{})
		want := `priorityclasses.scheduling.k8s.io "other-default" is forbidden: PriorityClass batch is already marked as default. Only one default can exist`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		cur, err := pcs.Get(ctx, "high", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.GlobalDefault = true
		_, err = pcs.Update(ctx, cur, metav1.UpdateOptions{})
		want = `priorityclasses.scheduling.k8s.io "high" is forbidden: PriorityClass batch is already marked as default. Only one default can exist`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("discovery serves priorityclasses, cluster-scoped, as pc", func(t *testing.T) {
		list, err := cs.Discovery().ServerResourcesForGroupVersion("scheduling.k8s.io/v1")
		if err != nil {
			t.Fatal(err)
		}
		if len(list.APIResources) != 1 || list.APIResources[0].Name != "priorityclasses" || list.APIResources[0].Namespaced ||
			len(list.APIResources[0].ShortNames) != 1 || list.APIResources[0].ShortNames[0] != "pc" {
			t.Errorf("scheduling.k8s.io/v1 resources = %+v", list.APIResources)
		}
	})
	t.Run("a user class may be deleted", func(t *testing.T) {
		if err := pcs.Delete(ctx, "high", metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})
}
