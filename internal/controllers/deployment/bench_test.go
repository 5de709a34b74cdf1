package deployment_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"minik/internal/controllers"
	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/deployment"
	"minik/internal/controllers/replicaset"
)

// BenchmarkDeploymentsConverge measures, on a real minikd, the time from
// creating n one-replica Deployments, one after the other as kubectl apply
// would, to every one of them converged: its ReplicaSet and pod exist, the
// pod is ready (the benchmark's kubelet stand-in marks it), and the
// Deployment's status says 1 replica updated, ready and available, with
// Progressing NewReplicaSetAvailable.
//
// The deployment and replicaset controllers run in a controllers.Manager
// as minikd runs them: with the manager's default flags (workers, client
// rate limits), and with a client the rate limiter does not hold back
// (what the controllers themselves and the API server can do). Every
// request the controllers send is counted: it reports Deployments per
// second, API requests per Deployment (a failed request counts once; the
// log's breakdown also lists failures by status, "PUT
// deployments/status (409)", among them), and the seconds the benchmark
// spent creating the Deployments.
func BenchmarkDeploymentsConverge(b *testing.B) {
	old := ctrltest.Timeout
	ctrltest.Timeout = 5 * time.Minute
	b.Cleanup(func() { ctrltest.Timeout = old })

	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("n=%d/controller manager defaults", n), func(b *testing.B) {
			benchmarkConverge(b, n, controllers.Config{})
		})
		b.Run(fmt.Sprintf("n=%d/unthrottled client", n), func(b *testing.B) {
			benchmarkConverge(b, n, controllers.Config{QPS: -1})
		})
	}
}

// countingTransport counts the requests that go through it, by verb and
// resource ("PUT deployments/status").
type countingTransport struct {
	next  http.RoundTripper
	total atomic.Int64
	mu    sync.Mutex
	by    map[string]int
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.total.Add(1)
	kind := requestKind(req)
	resp, err := t.next.RoundTrip(req)
	t.mu.Lock()
	t.by[kind]++
	if err == nil && resp.StatusCode >= 400 {
		t.by[fmt.Sprintf("%s (%d)", kind, resp.StatusCode)]++
	}
	t.mu.Unlock()
	return resp, err
}

// requestKind names a request by verb and resource: the path's segment
// after the namespace (or after the version for cluster-wide ones), with a
// subresource kept, and "watch" for watches.
func requestKind(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	resource := ""
	for i := range parts {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			resource = parts[i+2]
			if i+4 < len(parts) {
				resource += "/" + parts[i+4]
			}
			break
		}
	}
	if resource == "" && len(parts) > 0 {
		resource = parts[len(parts)-1]
	}
	verb := req.Method
	if req.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	return verb + " " + resource
}

func (t *countingTransport) snapshot() (int64, map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	by := make(map[string]int, len(t.by))
	for k, v := range t.by {
		by[k] = v
	}
	return t.total.Load(), by
}

// runManager runs the deployment and replicaset controllers in a
// controllers.Manager configured as cfg (its RESTConfig and Known are
// filled in), with every request counted, until the benchmark ends.
func (e *env) runManager(cfg controllers.Config) *countingTransport {
	e.t.Helper()
	counter := &countingTransport{by: map[string]int{}}
	rc := rest.CopyConfig(e.srv.RESTConfig)
	rc.Wrap(func(next http.RoundTripper) http.RoundTripper {
		counter.next = next
		return counter
	})
	cfg.RESTConfig = rc
	cfg.Known = map[string]controllers.Constructor{
		"deployment":    deployment.New,
		replicaset.Name: replicaset.New,
	}
	m, err := controllers.NewManager(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := m.Start(ctx); err != nil {
			e.t.Errorf("controller manager: %v", err)
		}
	}()
	e.t.Cleanup(func() {
		cancel()
		<-done
	})
	return counter
}

func benchmarkConverge(b *testing.B, n int, cfg controllers.Config) {
	e := newEnv(b)
	counter := e.runManager(cfg)
	e.kubelet(func(*corev1.Pod) bool { return true })
	var total, creating time.Duration
	var requests int64
	by := map[string]int{}
	round := 0
	for b.Loop() {
		round++
		names := make([]string, n)
		before, beforeBy := counter.snapshot()
		start := time.Now()
		for i := range n {
			names[i] = fmt.Sprintf("app-%d-%d", round, i)
			e.create(newDeployment(names[i], 1, "nginx:1.27"))
		}
		creating += time.Since(start)
		// Each poll checks only the Deployments not seen converged yet,
		// so that the benchmark's own checks cost time in proportion to n,
		// not to its square; once none is left, all are checked again.
		pending := names
		ctrltest.Wait(b, fmt.Sprintf("%d deployments converged", n), func() bool {
			left := pending[:0:0]
			for _, name := range pending {
				if !converged(e, name) {
					left = append(left, name)
				}
			}
			pending = left
			if len(pending) > 0 {
				return false
			}
			for _, name := range names {
				if !converged(e, name) {
					pending = append(pending, name)
				}
			}
			return len(pending) == 0
		})
		total += time.Since(start)
		after, afterBy := counter.snapshot()
		requests += after - before
		for k, v := range afterBy {
			by[k] += v - beforeBy[k]
		}
	}
	b.ReportMetric(float64(n*round)/total.Seconds(), "deployments/s")
	b.ReportMetric(float64(requests)/float64(n*round), "requests/deployment")
	// The benchmark's own creates, one after the other: a floor under the
	// time to converge.
	b.ReportMetric(creating.Seconds()/float64(round), "s-creating")
	kinds := make([]string, 0, len(by))
	for k, v := range by {
		if v > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %.2f", k, float64(v)/float64(n*round)))
		}
	}
	sort.Strings(kinds)
	b.Logf("requests per deployment: %s", strings.Join(kinds, ", "))
}

// converged: the Deployment's status reports its one replica updated,
// ready and available, its rollout complete, and its ReplicaSet and ready
// pod are in the benchmark's cache.
func converged(e *env, name string) bool {
	d, err := e.dLister.Deployments(e.ns).Get(name)
	if err != nil {
		return false
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation || s.Replicas != 1 || s.UpdatedReplicas != 1 || s.ReadyReplicas != 1 || s.AvailableReplicas != 1 {
		return false
	}
	if c := condition(d, appsv1.DeploymentProgressing); c == nil || c.Reason != deployment.ReasonNewReplicaSetAvailable {
		return false
	}
	sel := labels.SelectorFromSet(labels.Set{"app": name})
	rss, err := e.rsLister.ReplicaSets(e.ns).List(sel)
	if err != nil || len(rss) != 1 || !metav1.IsControlledBy(rss[0], d) {
		return false
	}
	pods, err := e.podLister.Pods(e.ns).List(sel)
	return err == nil && len(pods) == 1 && podReady(pods[0])
}
