package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"minik/internal/etcd"
	"minik/internal/server"
)

// startShared starts a minikd on a shared etcd with leader election, only
// the controller manager beside the API, and returns a client and its stop.
func startShared(t *testing.T, etcdURL string) (kubernetes.Interface, func()) {
	t.Helper()
	s, err := server.New(server.Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", EtcdServers: []string{etcdURL},
		LeaderElect: true, Controllers: []string{"deployment", "replicaset"}, NoScheduler: true,
		ShutdownTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	select {
	case <-s.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("minikd did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("minikd not ready after 60s")
	}
	cs, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return cs, stop
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func webDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

// TestControllersFailOverBetweenMinikdsSharingEtcd runs two minikd on one
// etcd: the controllers run in the one holding the
// kube-system/kube-controller-manager Lease, and when it stops the other
// takes the Lease over and reconciles.
func TestControllersFailOverBetweenMinikdsSharingEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a leader lease to expire")
	}
	db, err := etcd.Start(context.Background(), etcd.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	a, stopA := startShared(t, db.ClientURL())
	b, stopB := startShared(t, db.ClientURL())

	holder := func() string { return holderOf(ctx, a) }
	waitUntil(t, "a controller-manager leader", 30*time.Second, func() bool { return holder() != "" })
	first := holder()
	rsOf := func(cs kubernetes.Interface, name string) bool {
		l, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		return err == nil && len(l.Items) == 1
	}
	if _, err := a.AppsV1().Deployments("default").Create(ctx, webDeployment("one"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the leader's ReplicaSet for deployment one", 30*time.Second, func() bool { return rsOf(b, "one") })

	// Stop the leader: the survivor's client asks from then on.
	survivor := b
	leaderIsA := strings.HasSuffix(first, strings.TrimPrefix(restHost(a), "https://"))
	if leaderIsA {
		stopA()
	} else {
		stopB()
		survivor = a
	}
	if _, err := survivor.AppsV1().Deployments("default").Create(ctx, webDeployment("two"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The lease lasts 15 s; the survivor takes over within about that.
	waitUntil(t, "the survivor's ReplicaSet for deployment two", 45*time.Second, func() bool { return rsOf(survivor, "two") })
	if h := holderOf(ctx, survivor); h == first || h == "" {
		t.Fatalf("lease holder %q after failover, was %q", h, first)
	}
}

// restHost is the API address a clientset talks to.
func restHost(cs kubernetes.Interface) string {
	return cs.CoreV1().RESTClient().Get().URL().Host
}

// holderOf is the kube-controller-manager Lease's holder, as cs reads it.
func holderOf(ctx context.Context, cs kubernetes.Interface) string {
	l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
