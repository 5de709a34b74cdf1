package nodeagent_test

import (
	"context"
	"fmt"
	"net/http"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/nodeagent"
	"minik/internal/testserver"
)

// BenchmarkPodsRunning measures how many pods per second reach Running:
// pods pre-bound round-robin to the nodes (no scheduler), pause
// containers, simulated delays made negligible (speed 1000) so that the
// figure is the control plane's and the agents'. qps=kubelet gives each
// node the kubelet's client limits (50 QPS, burst 100), qps=unlimited
// none. Compare with KWOK's 10,000 pods Running within 120s (83 pods/s):
//
//	go test -run '^$' -bench 'PodsRunning/nodes=100,pods=10000' -benchtime 1x ./internal/nodeagent/
func BenchmarkPodsRunning(b *testing.B) {
	for _, tc := range []struct {
		nodes, pods int
		qps         float32
	}{{10, 1000, 0}, {10, 1000, -1}, {100, 10000, 0}, {100, 10000, -1}} {
		qps := "kubelet"
		if tc.qps < 0 {
			qps = "unlimited"
		}
		b.Run(fmt.Sprintf("nodes=%d,pods=%d,qps=%s", tc.nodes, tc.pods, qps), func(b *testing.B) {
			srv := testserver.Start(b)
			cfg := srv.RESTConfig
			cfg.QPS, cfg.Burst = -1, 0
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			timing := nodeagent.Timing{Speed: 1000}
			start := time.Now()
			startPool(b, srv, nodeagent.Config{Nodes: tc.nodes, Timing: timing, ClientQPS: tc.qps})
			registered := time.Since(start)
			b.ResetTimer()
			b.ReportMetric(registered.Seconds(), "s-to-register-nodes")
			for i := 0; i < b.N; i++ {
				ns := fmt.Sprintf("bench-%d", i)
				if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				elapsed := runPods(b, cs, ns, tc.nodes, tc.pods)
				b.ReportMetric(float64(tc.pods)/elapsed.Seconds(), "pods/s")
				b.ReportMetric(elapsed.Seconds(), "s-to-all-running")
			}
		})
	}
}

// runPods creates pods bound round-robin to the nodes and returns how long
// it took until all of them were Running.
func runPods(b *testing.B, cs kubernetes.Interface, ns string, nodes, pods int) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= pods {
					return
				}
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: ns},
					Spec: corev1.PodSpec{
						NodeName:   fmt.Sprintf("minik-node-%d", i%nodes+1),
						Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
					},
				}
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	running := map[string]bool{}
	for len(running) < pods {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				b.Fatalf("watch ended with %d of %d pods running", len(running), pods)
			}
			if ev.Type == watch.Error {
				b.Fatalf("watch error: %v", ev.Object)
			}
			if p, ok := ev.Object.(*corev1.Pod); ok && p.Status.Phase == corev1.PodRunning {
				running[p.Name] = true
			}
		case <-ctx.Done():
			b.Fatalf("%d of %d pods running after 10 minutes", len(running), pods)
		}
	}
	elapsed := time.Since(start)
	wg.Wait()
	return elapsed
}

// countingTransport counts requests.
type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// BenchmarkIdleNodes measures what idle nodes cost: the time to register
// them, the heap and goroutines they add (agents and API server together,
// one process), and their API requests once registered (a Lease renewal
// and a Node read per node per interval; the interval is shortened to 2s
// here, 10s by default). dra=2 runs each node's simulated DRA driver with
// two devices (minikd's default), dra=0 none; with drivers, the nodes
// count as registered once every ResourceSlice is published.
//
//	go test -run '^$' -bench 'IdleNodes/nodes=1000' -benchtime 1x ./internal/nodeagent/
func BenchmarkIdleNodes(b *testing.B) {
	for _, tc := range []struct{ n, dra int }{{100, 0}, {100, 2}, {1000, 0}, {1000, 2}} {
		n := tc.n
		b.Run(fmt.Sprintf("nodes=%d,dra=%d", n, tc.dra), func(b *testing.B) {
			srv := testserver.Start(b)
			heap, goroutines := heapAndGoroutines()
			var reqs atomic.Int64
			timing := nodeagent.Timing{Speed: 1000, LeaseRenewInterval: 2 * time.Second, NodeStatusUpdate: 2 * time.Second}
			start := time.Now()
			startPool(b, srv, nodeagent.Config{Nodes: n, Timing: timing, DRADevices: tc.dra}, func(c *rest.Config) {
				c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &reqs} }
			})
			if tc.dra > 0 {
				admin := srv.Client(b)
				err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
					list, err := admin.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
					return err == nil && len(list.Items) == n, err
				})
				if err != nil {
					b.Fatalf("waiting for %d ResourceSlices: %v", n, err)
				}
			}
			registered := time.Since(start)
			heap2, goroutines2 := heapAndGoroutines()
			b.ResetTimer()
			b.ReportMetric(registered.Seconds(), "s-to-register")
			b.ReportMetric(float64(heap2-heap)/float64(n)/1024, "heap-KiB/node")
			b.ReportMetric(float64(goroutines2-goroutines)/float64(n), "goroutines/node")
			for i := 0; i < b.N; i++ {
				reqs.Store(0)
				window := 10 * time.Second
				time.Sleep(window) // a steady state to observe, not a synchronisation
				b.ReportMetric(float64(reqs.Load())/window.Seconds(), "requests/s")
			}
		})
	}
}

func heapAndGoroutines() (uint64, int) {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapInuse, goruntime.NumGoroutine()
}
