package deployment_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/deployment"
	"minik/internal/controllers/replicaset"
)

// BenchmarkHundredDeploymentsConverge measures, on a real minikd with the
// deployment and replicaset controllers (controller manager defaults: 5
// workers, client QPS 200), the time from creating 100 one-replica
// Deployments, one after the other as kubectl apply would, to every one
// of them converged: its ReplicaSet and pod exist, the pod is ready (the
// benchmark's kubelet stand-in marks it), and the Deployment's status says
// 1 replica updated, ready and available, with Progressing
// NewReplicaSetAvailable. It reports Deployments per second, with the
// controller manager's defaults and with an unthrottled client (each
// Deployment costs about eleven API requests between the two controllers,
// so QPS 200 alone bounds the first at about 18 a second).
func BenchmarkHundredDeploymentsConverge(b *testing.B) {
	old := ctrltest.Timeout
	ctrltest.Timeout = 5 * time.Minute
	b.Cleanup(func() { ctrltest.Timeout = old })

	b.Run("controller manager defaults", func(b *testing.B) {
		e := newEnv(b, both...)
		benchmarkConverge(b, e)
	})
	// The same controllers, run by the benchmark with a client that the
	// rate limiter does not hold back: what the controllers themselves
	// and the API server can do.
	b.Run("unthrottled client", func(b *testing.B) {
		e := newEnv(b)
		e.runControllers(clock.RealClock{}, 100000, deployment.New, replicaset.New)
		benchmarkConverge(b, e)
	})
}

func benchmarkConverge(b *testing.B, e *env) {
	const n = 100
	e.kubelet(func(*corev1.Pod) bool { return true })
	var total time.Duration
	round := 0
	for b.Loop() {
		round++
		names := make([]string, n)
		start := time.Now()
		for i := range n {
			names[i] = fmt.Sprintf("app-%d-%d", round, i)
			e.create(newDeployment(names[i], 1, "nginx:1.27"))
		}
		ctrltest.Wait(b, fmt.Sprintf("%d deployments converged", n), func() bool {
			for _, name := range names {
				if !converged(e, name) {
					return false
				}
			}
			return true
		})
		total += time.Since(start)
	}
	b.ReportMetric(float64(n*round)/total.Seconds(), "deployments/s")
	b.ReportMetric(total.Seconds()/float64(round), "s/100-deployments")
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
	if len(e.replicaSets(d)) != 1 {
		return false
	}
	pods, err := e.podLister.Pods(e.ns).List(labels.SelectorFromSet(labels.Set{"app": name}))
	return err == nil && len(pods) == 1 && podReady(pods[0])
}
