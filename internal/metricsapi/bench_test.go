package metricsapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"minik/internal/testserver"
)

// BenchmarkListPodMetrics is `kubectl top pods -A` against 3 nodes
// running 60 pods: the summaries are reused for a second, so most
// iterations cost the API round trip and the encoding, one in a second a
// scrape of every node.
func BenchmarkListPodMetrics(b *testing.B) {
	srv := testserver.StartWith(b, testserver.Options{Nodes: 3})
	cs := srv.Client(b)
	mc, err := metricsclient.NewForConfig(srv.RESTConfig)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const pods = 60
	for i := range pods {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default", Labels: map[string]string{"app": "bench"}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("minik-node-%d", 1+i%3), Containers: []corev1.Container{{
				Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "3600"},
			}}},
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := mc.MetricsV1beta1().PodMetricses("").List(ctx, metav1.ListOptions{})
		if apierrors.IsServiceUnavailable(err) {
			return false, nil
		}
		return err == nil && len(l.Items) == pods, err
	})
	if err != nil {
		b.Fatalf("waiting for the pods' metrics: %v", err)
	}
	b.ResetTimer()
	for b.Loop() {
		l, err := mc.MetricsV1beta1().PodMetricses("").List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != pods {
			b.Fatalf("list: %v", err)
		}
	}
}
