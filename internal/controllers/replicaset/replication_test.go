package replicaset_test

import (
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/garbagecollector"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

// TestReplicationControllerKeepsItsPods runs the replication controller
// with the scheduler and simulated nodes: a ReplicationController of 3
// gets 3 running pods it controls and reports them; scaled to 1 through
// its scale subresource it keeps 1; deleted (in the background, as
// kubectl deletes), the garbage collector removes its pods.
func TestReplicationControllerKeepsItsPods(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{replicaset.ReplicationName, garbagecollector.Name}, Scheduler: true, Nodes: 2,
	})
	cs, ctx := srv.Client(t), t.Context()
	const ns = "rc"
	createNamespace(ctx, t, cs, ns)
	rcs := cs.CoreV1().ReplicationControllers(ns)
	replicas := int32(3)
	rc, err := rcs.Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &replicas,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web" {
		t.Fatalf("selector %v, labels %v: want both defaulted from the template", rc.Spec.Selector, rc.Labels)
	}

	running := func() (active, all int) {
		for _, p := range listPods(ctx, t, cs, ns, "app=web") {
			all++
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				active++
			}
		}
		return active, all
	}
	statusIs := func(n int32) bool {
		cur, err := rcs.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := cur.Status
		return st.ObservedGeneration == cur.Generation && st.Replicas == n && st.FullyLabeledReplicas == n &&
			st.ReadyReplicas == n && st.AvailableReplicas == n
	}
	ctrltest.Wait(t, "3 running pods, reported in the status", func() bool {
		active, all := running()
		return active == 3 && all == 3 && statusIs(3)
	})
	for _, p := range listPods(ctx, t, cs, ns, "app=web") {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.APIVersion != "v1" || ref.Kind != "ReplicationController" || ref.Name != "web" || ref.UID != rc.UID ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s has controller %+v; want the ReplicationController web", p.Name, ref)
		}
		if p.Spec.NodeName == "" {
			t.Errorf("pod %s is running unscheduled", p.Name)
		}
	}

	sc, err := rcs.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Replicas != 3 || sc.Status.Replicas != 3 || sc.Status.Selector != "app=web" {
		t.Errorf("scale %+v; want 3 of 3, selector app=web", sc)
	}
	if _, err := rcs.UpdateScale(ctx, "web", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 1},
	}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "1 pod left after scaling to 1", func() bool {
		active, all := running()
		return active == 1 && all == 1 && statusIs(1)
	})

	background := metav1.DeletePropagationBackground
	if err := rcs.Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the ReplicationController's pods gone", func() bool {
		_, all := running()
		return all == 0
	})
}

// TestReplicationControllerReportsRefusedCreation: pods the API server
// refuses set the ReplicaFailure condition, with the server's message,
// and the replication-controller's FailedCreate event names the
// ReplicationController.
func TestReplicationControllerReportsRefusedCreation(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{replicaset.ReplicationName}})
	cs, ctx := srv.Client(t), t.Context()
	const ns = "rc-refused"
	createNamespace(ctx, t, cs, ns)
	replicas := int32(2)
	// Template metadata is not validated with the ReplicationController;
	// pod validation then refuses the unqualified finalizer.
	if _, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &replicas,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Finalizers: []string{"cleanup"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var cond *corev1.ReplicationControllerCondition
	ctrltest.Wait(t, "a ReplicaFailure condition", func() bool {
		rc, err := cs.CoreV1().ReplicationControllers(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rc.Status.Conditions {
			if c.Type == corev1.ReplicationControllerReplicaFailure {
				cond = &c
				return true
			}
		}
		return false
	})
	if cond.Status != corev1.ConditionTrue || cond.Reason != replicaset.ReasonFailedCreate ||
		!strings.HasPrefix(cond.Message, `Pod "web-`) || !strings.Contains(cond.Message, `metadata.finalizers[0]: Invalid value: "cleanup"`) {
		t.Errorf("condition = %+v, want ReplicaFailure True FailedCreate with the server's message", cond)
	}
	ctrltest.Wait(t, "a FailedCreate event on the ReplicationController", func() bool {
		l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Items {
			if e.Reason == replicaset.ReasonFailedCreate && e.Source.Component == replicaset.ReplicationComponent &&
				e.InvolvedObject.Kind == "ReplicationController" && e.InvolvedObject.APIVersion == "v1" && e.InvolvedObject.Name == "web" {
				return true
			}
		}
		return false
	})
}

// TestReplicationControllerAdoptsAndReleases: an orphan pod the selector
// matches is adopted instead of a new one created; relabelled out of the
// selector, it is released and replaced (kube's e2e "should adopt
// matching pods on creation" and "should release no longer matching
// pods").
func TestReplicationControllerAdoptsAndReleases(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{replicaset.ReplicationName}})
	cs, ctx := srv.Client(t), t.Context()
	const ns = "rc-adopt"
	createNamespace(ctx, t, cs, ns)
	labels := map[string]string{"name": "pod-adoption"}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-adoption", Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	rc, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-adoption"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &one, Selector: labels,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the orphan adopted", func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "pod-adoption", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.UID == rc.UID && ref.Kind == "ReplicationController"
	})
	if pods := listPods(ctx, t, cs, ns, "name=pod-adoption"); len(pods) != 1 {
		t.Errorf("%d pods; want the adopted one only", len(pods))
	}
	patch := `{"metadata":{"labels":{"name":"not-matching"}}}`
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "pod-adoption", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the pod released and replaced", func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "pod-adoption", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.OwnerReferences) == 0 && len(listPods(ctx, t, cs, ns, "name=pod-adoption")) == 1
	})
}

// TestReplicationControllerDeleteOrphansByDefault: a delete without a
// propagation policy orphans a ReplicationController's pods, kube's core/v1
// default: the garbage collector releases them and lets the object go.
func TestReplicationControllerDeleteOrphansByDefault(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{replicaset.ReplicationName, garbagecollector.Name}})
	cs, ctx := srv.Client(t), t.Context()
	const ns = "rc-orphan"
	createNamespace(ctx, t, cs, ns)
	one := int32(1)
	rcs := cs.CoreV1().ReplicationControllers(ns)
	if _, err := rcs.Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &one,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the pod", func() bool { return len(listPods(ctx, t, cs, ns, "app=web")) == 1 })
	if err := rcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the ReplicationController gone", func() bool {
		_, err := rcs.Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	pods := listPods(ctx, t, cs, ns, "app=web")
	if len(pods) != 1 || len(pods[0].OwnerReferences) != 0 || pods[0].DeletionTimestamp != nil {
		t.Errorf("pods %+v; want the one pod kept, orphaned", pods)
	}
}
