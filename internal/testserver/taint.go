package testserver

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TaintNodes puts taint on every node and returns once the scheduler has
// seen it. Each node's update also sets a label to the node's name; a
// canary pod per node selects its node by that label and tolerates the
// taint, so it can be bound only by a scheduler whose cache holds that
// update, taint included. (A pod created right after the taints could
// otherwise be bound from a cache that trails the API.) The canaries stay
// in the default namespace.
func TaintNodes(t testing.TB, cs kubernetes.Interface, taint corev1.Taint) {
	t.Helper()
	ctx := context.Background()
	const label = "minik.test/tainted"
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		n.Spec.Taints = append(n.Spec.Taints, taint)
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[label] = n.Name
		if _, err := cs.CoreV1().Nodes().Update(ctx, &n, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("taint node %s: %v", n.Name, err)
		}
	}
	var canaries []string
	for _, n := range nodes.Items {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "canary-" + n.Name, Namespace: "default"},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{label: n.Name},
				Tolerations:  []corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: taint.Value, Effect: taint.Effect}},
				Containers:   []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		canaries = append(canaries, pod.Name)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, name := range canaries {
		for {
			p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Spec.NodeName != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("canary pod %s was not scheduled in 30s: the scheduler did not see the nodes' taints", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
