package namespace_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/controllers/ctrltest"
)

// BenchmarkNamespaceDeletion100Pods measures deleting a namespace that holds
// a ReplicaSet of 100 pods and 100 ConfigMaps, from the DELETE to the
// namespace gone (1s of it is the controller's grace period).
func BenchmarkNamespaceDeletion100Pods(b *testing.B) {
	cs, ctx := start(b)
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		ns := fmt.Sprintf("bench-%d", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		labels := map[string]string{"app": "web"}
		n := int32(100)
		if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			}},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 100; j++ {
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", j)}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		ctrltest.Wait(b, "100 pods", func() bool {
			rs, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && rs.Status.Replicas == 100
		})
		start := time.Now()
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		ctrltest.Wait(b, "the namespace removed", func() bool { return namespaceGone(ctx, b, cs, ns) })
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-gone")
}
