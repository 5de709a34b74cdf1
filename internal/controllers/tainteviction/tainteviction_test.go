package tainteviction_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/replicaset"
	"minik/internal/controllers/tainteviction"
	"minik/internal/testserver"
)

const (
	ns = "default"
	// maintenance is a taint no default toleration covers.
	maintenance = "example.com/maintenance"
)

func createNode(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createPod creates a pod bound to node. No kubelet runs: a deleted pod
// stays, terminating, with the status the controller gave it.
func createPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, node string, tolerations ...corev1.Toleration) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node, Tolerations: tolerations,
			Containers: []corev1.Container{{Name: "app", Image: "pause"}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setTaints replaces the node's taints.
func setTaints(ctx context.Context, t *testing.T, cs kubernetes.Interface, node string, taints ...corev1.Taint) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Taints = taints
		_, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("taint node %s: %v", node, err)
	}
}

func noExecute(key string, added *metav1.Time) corev1.Taint {
	return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: added}
}

// tolerate tolerates the key's NoExecute taints for seconds (nil: forever).
func tolerate(key string, seconds *int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

func seconds(n int64) *int64 { return &n }

// getPod returns the pod, or nil once it is gone.
func getPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deleted tells whether the pod is gone or terminating.
func deleted(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) bool {
	p := getPod(ctx, t, cs, name)
	return p == nil || p.DeletionTimestamp != nil
}

// waitDeleted waits for the pod to be deleted and returns its last state
// (nil if it is gone already).
func waitDeleted(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	ctrltest.Wait(t, "pod "+name+" deleted", func() bool {
		last = getPod(ctx, t, cs, name)
		return last == nil || last.DeletionTimestamp != nil
	})
	return last
}

func disruptionTarget(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// checkMarked checks the condition kube's taint manager sets before it
// deletes a pod, and returns it.
func checkMarked(t *testing.T, p *corev1.Pod) *corev1.PodCondition {
	t.Helper()
	if p == nil {
		t.Fatal("the pod is gone: a pod bound to a node without a kubelet should stay terminating")
	}
	c := disruptionTarget(p)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "DeletionByTaintManager" || c.Message != "Taint manager: deleting due to NoExecute taint" {
		t.Fatalf("DisruptionTarget condition %+v, want True, DeletionByTaintManager", c)
	}
	return c
}

// waitEvent waits for an event of the controller on the pod with the
// message.
func waitEvent(ctx context.Context, t *testing.T, cs kubernetes.Interface, pod, message string) {
	t.Helper()
	var seen []string
	ctrltest.Wait(t, fmt.Sprintf("event %q on pod %s", message, pod), func() bool {
		l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen = seen[:0]
		for _, e := range l.Items {
			if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.Name != pod {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == tainteviction.ReasonTaintManagerEviction && e.Message == message &&
				e.Type == corev1.EventTypeNormal && e.Source.Component == tainteviction.Name {
				return true
			}
		}
		return false
	})
}

// TestTaintEviction runs the controller, as the controller manager does,
// against a real API server; each case has nodes and pods of its own.
func TestTaintEviction(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{tainteviction.Name}})
	cs := srv.Client(t)
	ctx := t.Context()

	t.Run("a pod that does not tolerate a NoExecute taint is marked and deleted at once", func(t *testing.T) {
		t.Parallel()
		createNode(ctx, t, cs, "intolerant")
		createPod(ctx, t, cs, "intolerant-web", "intolerant")
		// A NoSchedule taint evicts nobody.
		setTaints(ctx, t, cs, "intolerant", corev1.Taint{Key: maintenance, Effect: corev1.TaintEffectNoSchedule})
		now := metav1.Now()
		setTaints(ctx, t, cs, "intolerant", corev1.Taint{Key: maintenance, Effect: corev1.TaintEffectNoSchedule}, noExecute(maintenance, &now))
		checkMarked(t, waitDeleted(ctx, t, cs, "intolerant-web"))
		waitEvent(ctx, t, cs, "intolerant-web", "Marking for deletion Pod default/intolerant-web")
	})

	t.Run("a pod is deleted when its toleration runs out, and one that tolerates forever stays", func(t *testing.T) {
		t.Parallel()
		createNode(ctx, t, cs, "draining")
		createPod(ctx, t, cs, "draining-web", "draining", tolerate(maintenance, seconds(2)))
		createPod(ctx, t, cs, "draining-agent", "draining", tolerate(maintenance, nil))
		added := metav1.Now() // stored to the second: the deadline is 1 to 2s away
		setTaints(ctx, t, cs, "draining", noExecute(maintenance, &added))
		if deleted(ctx, t, cs, "draining-web") {
			t.Fatal("a pod tolerating the taint for 2s was deleted right away")
		}
		c := checkMarked(t, waitDeleted(ctx, t, cs, "draining-web"))
		// Marked no earlier than the toleration allows (both times are
		// stored to the second).
		if deadline := added.Add(2 * time.Second).Truncate(time.Second); c.LastTransitionTime.Time.Before(deadline) {
			t.Errorf("marked for deletion at %v, before the toleration ran out at %v", c.LastTransitionTime, deadline)
		}
		waitEvent(ctx, t, cs, "draining-web", "Marking for deletion Pod default/draining-web")
		if p := getPod(ctx, t, cs, "draining-agent"); p == nil || p.DeletionTimestamp != nil || disruptionTarget(p) != nil {
			t.Errorf("a pod tolerating the taint forever was evicted: %+v", p)
		}
	})

	t.Run("removing the taint before the toleration runs out cancels the deletion", func(t *testing.T) {
		t.Parallel()
		createNode(ctx, t, cs, "flaky")
		createPod(ctx, t, cs, "flaky-web", "flaky", tolerate(maintenance, seconds(2)))
		// Without timeAdded, the toleration counts from when the
		// controller sees the pod tainted: 2s from about now.
		setTaints(ctx, t, cs, "flaky", noExecute(maintenance, nil))
		setTaints(ctx, t, cs, "flaky")
		waitEvent(ctx, t, cs, "flaky-web", "Cancelling deletion of Pod default/flaky-web")

		// A witness tainted after the cancellation, tolerating as long, is
		// evicted after flaky-web would have been.
		createNode(ctx, t, cs, "witness")
		createPod(ctx, t, cs, "witness-web", "witness", tolerate(maintenance, seconds(2)))
		setTaints(ctx, t, cs, "witness", noExecute(maintenance, nil))
		waitDeleted(ctx, t, cs, "witness-web")
		if p := getPod(ctx, t, cs, "flaky-web"); p == nil || p.DeletionTimestamp != nil || disruptionTarget(p) != nil {
			t.Errorf("the pod was evicted although its node's taint was removed: %+v", p)
		}
	})

	t.Run("a pod bound to a tainted node after the taint is deleted too", func(t *testing.T) {
		t.Parallel()
		createNode(ctx, t, cs, "tainted-first")
		now := metav1.Now()
		setTaints(ctx, t, cs, "tainted-first", noExecute(maintenance, &now))
		createPod(ctx, t, cs, "late-web", "tainted-first", corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists})
		checkMarked(t, waitDeleted(ctx, t, cs, "late-web"))
	})
}

// TestEvictedReplicasMoveToAnotherNode: the pods of a ReplicaSet evicted
// from a node tainted NoExecute (and NoSchedule) are replaced, and the
// replacements are scheduled on the node left.
func TestEvictedReplicasMoveToAnotherNode(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{tainteviction.Name, replicaset.Name}, Scheduler: true, Nodes: 2,
	})
	cs := srv.Client(t)
	ctx := t.Context()
	replicas := int32(4)
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// byNode counts the live (not terminating) pods of the ReplicaSet by
	// node, "" for those not scheduled yet.
	byNode := func() map[string]int {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				out[p.Spec.NodeName]++
			}
		}
		return out
	}
	ctrltest.Wait(t, "4 pods scheduled", func() bool {
		n := byNode()
		return n[""] == 0 && n["minik-node-1"]+n["minik-node-2"] == 4
	})
	if n := byNode(); n["minik-node-1"] == 0 {
		// The scheduler spreads replicas; should it not, there is nothing
		// to evict and the test proves nothing.
		t.Fatalf("no replica on minik-node-1: %v", n)
	}
	now := metav1.Now()
	setTaints(ctx, t, cs, "minik-node-1",
		corev1.Taint{Key: maintenance, Effect: corev1.TaintEffectNoSchedule},
		noExecute(maintenance, &now))
	ctrltest.Wait(t, "the 4 replicas on minik-node-2", func() bool {
		n := byNode()
		return n["minik-node-2"] == 4 && len(n) == 1
	})
}
