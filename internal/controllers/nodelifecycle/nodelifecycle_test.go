package nodelifecycle_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
	"minik/internal/controllers/nodelifecycle"
	"minik/internal/nodeagent"
	"minik/internal/pki"
	"minik/internal/testserver"
)

// startController runs the controller against srv with a short grace
// period, until the test ends.
func startController(t *testing.T, srv *testserver.Server, grace time.Duration) {
	t.Helper()
	cs := srv.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	cc := &controllers.Context{
		Client:    cs,
		Informers: informers.NewSharedInformerFactory(cs, 0),
		Recorder: func(component string) record.EventRecorder {
			return broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
		},
		Clock:  clock.RealClock{},
		Logger: slog.Default(),
	}
	c, err := nodelifecycle.NewWithConfig(cc, nodelifecycle.Config{GracePeriod: grace, MonitorPeriod: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cc.Informers.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, 1)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cc.Informers.Shutdown()
		broadcaster.Shutdown()
	})
}

// startNodes runs simulated nodes in the test, with node identities from
// the server's CA, and returns a function that stops them.
func startNodes(t *testing.T, srv *testserver.Server, prefix string, n int) func() {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	timing := nodeagent.FastTiming()
	timing.LeaseRenewInterval, timing.NodeStatusUpdate = 100*time.Millisecond, 100*time.Millisecond
	pool, err := nodeagent.New(nodeagent.Config{
		Nodes: n, NamePrefix: prefix, DataDir: t.TempDir(), Timing: timing, FirstBlock: testserver.NodeBlock(),
		ClientConfig: func(node string) (*rest.Config, error) {
			kp, err := ca.SignClient("system:node:"+node, []string{"system:nodes"}, 0)
			if err != nil {
				return nil, err
			}
			c := rest.CopyConfig(srv.RESTConfig)
			c.CertData, c.KeyData = kp.CertPEM, kp.KeyPEM
			return c, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Start(ctx) }()
	select {
	case <-pool.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("nodes did not start: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("nodes not ready after 30s")
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("nodes stopped with: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func waitNode(t *testing.T, cs kubernetes.Interface, name, what string, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	var last *corev1.Node
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = n
		return cond(n), nil
	})
	if err != nil {
		t.Fatalf("waiting for node %s %s: %v\nconditions %+v\ntaints %+v", name, what, err, last.Status.Conditions, last.Spec.Taints)
	}
	return last
}

func ready(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key && t.Effect == effect })
}

// TestStoppedNodeGoesNotReady: a node whose agent stops renewing its Lease
// becomes Unknown and tainted unreachable after the grace period, its pods
// not Ready; it recovers when the agent is back.
func TestStoppedNodeGoesNotReady(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	startController(t, srv, time.Second)
	stop := startNodes(t, srv, "edge-", 1)
	startNodes(t, srv, "stays-", 1)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "edge-1", Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podReady := func() corev1.ConditionStatus {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status
			}
		}
		return ""
	}
	waitNode(t, cs, "edge-1", "Ready", func(n *corev1.Node) bool { return ready(n) == corev1.ConditionTrue })
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return podReady() == corev1.ConditionTrue, nil
	}); err != nil {
		t.Fatal("the pod never became Ready")
	}
	stop()
	n := waitNode(t, cs, "edge-1", "Unknown and tainted", func(n *corev1.Node) bool {
		return ready(n) == corev1.ConditionUnknown && hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute) &&
			hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule)
	})
	for _, c := range n.Status.Conditions {
		if c.Status != corev1.ConditionUnknown || c.Reason != nodelifecycle.ReasonStatusUnknown || c.Message != "Kubelet stopped posting node status." {
			t.Errorf("condition %+v", c)
		}
	}
	if podReady() != corev1.ConditionFalse {
		t.Errorf("the pod of an unreachable node is still Ready")
	}
	// The node whose agent kept running outlived the grace period healthy.
	if n, _ := cs.CoreV1().Nodes().Get(context.Background(), "stays-1", metav1.GetOptions{}); ready(n) != corev1.ConditionTrue || len(n.Spec.Taints) != 0 {
		t.Errorf("a healthy node: conditions %+v taints %+v", n.Status.Conditions, n.Spec.Taints)
	}

	startNodes(t, srv, "edge-", 1)
	waitNode(t, cs, "edge-1", "Ready again and untainted", func(n *corev1.Node) bool {
		return ready(n) == corev1.ConditionTrue && len(n.Spec.Taints) == 0
	})
}
