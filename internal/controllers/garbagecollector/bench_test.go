package garbagecollector_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/controllers/ctrltest"
)

// BenchmarkCascade100Pods measures deleting a ReplicaSet of 100 pods, from
// the DELETE to the last pod gone, in the background and in the foreground.
func BenchmarkCascade100Pods(b *testing.B) {
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		b.Run(string(policy), func(b *testing.B) {
			ns := "bench-" + strings.ToLower(string(policy))
			cs, ctx := start(b, ns)
			var total time.Duration
			for i := 0; b.Loop(); i++ {
				labels := map[string]string{"app": fmt.Sprintf("web-%d", i)}
				n := int32(100)
				name := fmt.Sprintf("web-%d", i)
				if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
					}},
				}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				ctrltest.Wait(b, "100 pods", func() bool { return len(pods(ctx, b, cs, ns)) == 100 })
				start := time.Now()
				if err := cs.AppsV1().ReplicaSets(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
					b.Fatal(err)
				}
				ctrltest.Wait(b, "every pod deleted", func() bool { return len(pods(ctx, b, cs, ns)) == 0 })
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-no-pods")
		})
	}
}
