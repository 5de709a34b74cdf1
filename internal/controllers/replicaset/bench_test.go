package replicaset_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

// BenchmarkReplicaSet100 measures a ReplicaSet of 100 replicas from
// creation to 100 pods existing, then, once the benchmark marks them
// ready, to a status of 100 ready and available replicas.
func BenchmarkReplicaSet100(b *testing.B) {
	srv := testserver.StartWith(b, testserver.Options{Controllers: []string{replicaset.Name}})
	cs, ctx := srv.Client(b), b.Context()
	var toPods, toReady time.Duration
	for i := 0; b.Loop(); i++ {
		ns := fmt.Sprintf("bench-%d", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, newRS("web", 100, map[string]string{"app": "web"}), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		ctrltest.Wait(b, "100 replicas", func() bool {
			rs, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && rs.Status.Replicas == 100
		})
		toPods += time.Since(start)
		marked := time.Now()
		ctrltest.MarkPodsReady(ctx, b, cs, ns, "app=web")
		ctrltest.Wait(b, "100 available replicas", func() bool {
			rs, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && rs.Status.AvailableReplicas == 100
		})
		toReady += time.Since(marked)
	}
	b.ReportMetric(float64(toPods.Milliseconds())/float64(b.N), "ms-to-100-pods")
	b.ReportMetric(float64(toReady.Milliseconds())/float64(b.N), "ms-ready-to-status")
}
