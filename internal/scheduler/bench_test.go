package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/testserver"
)

// benchSize reads a size from the environment (for quick runs), else def.
func benchSize(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkSchedulingThroughput creates Node objects (default 1,000) and
// then pods (default 10,000) through the API, and measures pods per second
// from the first pod's creation to the last pod's binding, as seen by a
// watch. kube-scheduler's scheduler_perf gate for comparison: 680 pods/s
// at 5,000 nodes. MINIK_BENCH_NODES and MINIK_BENCH_PODS change the sizes.
//
//	go test -run '^$' -bench SchedulingThroughput -benchtime 1x ./internal/scheduler/
func BenchmarkSchedulingThroughput(b *testing.B) {
	nodes := benchSize("MINIK_BENCH_NODES", 1000)
	pods := benchSize("MINIK_BENCH_PODS", 10000)
	srv := testserver.StartWith(b, testserver.Options{Scheduler: true})
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.QPS = -1
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	parallel(b, nodes, 16, func(i int) error {
		_, err := cs.CoreV1().Nodes().Create(ctx, benchNode(fmt.Sprintf("minik-node-%d", i+1), i), metav1.CreateOptions{})
		return err
	})
	// A node created after all the others, and a pod pinned to it: once
	// bound, the scheduler knows every node.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sync"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, benchNode("sentinel", 0), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	barrier := benchPod("barrier", "sync", 0)
	barrier.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "sentinel"}
	if _, err := cs.CoreV1().Pods("sync").Create(ctx, barrier, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	waitAllBound(b, cs, "sync", 1, new(atomic.Int64), time.Minute)
	if err := cs.CoreV1().Pods("sync").Delete(ctx, "barrier", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		b.Fatal(err)
	}
	if err := cs.CoreV1().Nodes().Delete(ctx, "sentinel", metav1.DeleteOptions{}); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	var total time.Duration
	for round := range b.N {
		ns := fmt.Sprintf("bench-%d", round)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		done := make(chan time.Duration, 1)
		var bound atomic.Int64
		start := time.Now()
		go func() { done <- waitAllBound(b, cs, ns, pods, &bound, 10*time.Minute) }()
		parallel(b, pods, 32, func(i int) error {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, benchPod(fmt.Sprintf("pod-%d", i), ns, i), metav1.CreateOptions{})
			return err
		})
		created := time.Since(start)
		boundThen := bound.Load()
		<-done
		elapsed := time.Since(start)
		total += elapsed
		b.Logf("round %d: %d pods on %d nodes: created in %v (%.0f pods/s), %d bound by then; all bound after %v (%.0f pods/s); the last %d in %v (%.0f pods/s)",
			round, pods, nodes, created.Round(time.Millisecond), float64(pods)/created.Seconds(), boundThen,
			elapsed.Round(time.Millisecond), float64(pods)/elapsed.Seconds(),
			int64(pods)-boundThen, (elapsed - created).Round(time.Millisecond), float64(int64(pods)-boundThen)/(elapsed-created).Seconds())
	}
	b.ReportMetric(float64(pods*b.N)/total.Seconds(), "pods/s")
}

func benchNode(name string, i int) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname:     name,
			corev1.LabelOSStable:     "linux",
			corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%10),
		}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("32"),
			corev1.ResourceMemory: resource.MustParse("128Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}},
	}
}

func benchPod(name, ns string, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%100)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
			}},
		}}},
	}
}

// parallel runs f(0..n-1) on workers goroutines and fails b on the first
// error.
func parallel(b *testing.B, n, workers int, f func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || failed.Load() != nil {
					return
				}
				if err := f(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}

// waitAllBound watches the pods of ns with a spec.nodeName until n of
// them have been seen (counting them in bound), and returns how long it
// waited.
func waitAllBound(b *testing.B, cs kubernetes.Interface, ns string, n int, bound *atomic.Int64, timeout time.Duration) time.Duration {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	seen := map[string]bool{}
	rv := ""
	for len(seen) < n {
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermNotEqualSelector("spec.nodeName", "").String(),
			ResourceVersion: rv, AllowWatchBookmarks: true,
		})
		if err != nil {
			b.Errorf("watch pods in %s: %v", ns, err)
			return time.Since(start)
		}
		for ev := range w.ResultChan() {
			if m, ok := ev.Object.(metav1.Object); ok {
				rv = m.GetResourceVersion()
			}
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				seen[ev.Object.(*corev1.Pod).Name] = true
				bound.Store(int64(len(seen)))
				if len(seen) >= n {
					break
				}
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			b.Errorf("%d of %d pods bound in %s after %v", len(seen), n, ns, timeout)
			return time.Since(start)
		}
	}
	return time.Since(start)
}
