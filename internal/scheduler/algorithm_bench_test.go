package scheduler

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkScheduleAlgorithm measures the scheduling loop alone, without
// the API: filter 1,000 nodes, score the feasible ones, assume the pod;
// one op is one pod. It is the ceiling the API round trips sit under.
func BenchmarkScheduleAlgorithm(b *testing.B) {
	for _, tc := range []struct {
		name string
		opt  podOpt
	}{
		{"plain pods", func(*corev1.Pod) {}},
		{"pods with anti-affinity", antiAffinity(corev1.LabelHostname, "app", "spread")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := &Scheduler{cache: newCache(nil)}
			for i := range 1000 {
				s.cache.setNode(testNode(fmt.Sprintf("node-%d", i), "32", "128Gi",
					nodeLabels(corev1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%10))))
			}
			pods := make([]*corev1.Pod, 0, b.N)
			for i := range b.N {
				pods = append(pods, testPod(fmt.Sprintf("pod-%d", i), requests("100m", "128Mi"),
					withLabels("app", fmt.Sprintf("app-%d", i%100)), tc.opt))
			}
			b.ResetTimer()
			for i := range b.N {
				pi := newPodInfo(pods[i])
				a := s.findNode(pi)
				if a.node == "" {
					// The cluster is full (110 pods a node): start over.
					b.StopTimer()
					s.cache = newCache(nil)
					for j := range 1000 {
						s.cache.setNode(testNode(fmt.Sprintf("node-%d", j), "32", "128Gi"))
					}
					b.StartTimer()
					continue
				}
				s.cache.assume(pi, a.node)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
