package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"minik/internal/server"
)

// process is a child process the HA test may kill -9; its output goes to
// a file, shown when the test fails.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startChild(t *testing.T, name string, args ...string) *process {
	t.Helper()
	p := &process{name: name, log: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(minikdBinary, args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); out.Close(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			data, _ := os.ReadFile(p.log)
			if len(data) > 4000 {
				data = data[len(data)-4000:]
			}
			t.Logf("--- %s's output (end):\n%s", p.name, data)
		}
	})
	return p
}

// kill kills the process with SIGKILL and waits until it is gone.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// etcdCluster starts n etcd members, each a `minikd etcd-member` process on
// free loopback ports, and returns them with their client URLs once the
// cluster takes writes.
func etcdCluster(t *testing.T, n int) ([]*process, []string) {
	t.Helper()
	var names, clients, peers, initial []string
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("etcd-%d", i))
		clients = append(clients, "http://"+freeAddr(t))
		peers = append(peers, "http://"+freeAddr(t))
		initial = append(initial, names[i]+"="+peers[i])
	}
	var members []*process
	for i := range names {
		members = append(members, startChild(t, names[i], "etcd-member", "--name", names[i],
			"--data-dir", filepath.Join(t.TempDir(), names[i]), "--listen-client-url", clients[i],
			"--listen-peer-url", peers[i], "--initial-cluster", strings.Join(initial, ",")))
	}
	c := etcdClient(t, clients)
	waitUntil(t, "the etcd cluster to take a write", 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Put(ctx, "/ha-test/ready", "yes")
		return err == nil
	})
	return members, clients
}

func etcdClient(t *testing.T, endpoints []string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// etcdLeader is the index of the member leading the cluster, or -1.
func etcdLeader(c *clientv3.Client, clients []string) int {
	for i, ep := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := c.Status(ctx, ep)
		cancel()
		if err == nil && st.Leader == st.Header.MemberId {
			return i
		}
	}
	return -1
}

// haMinikd is one minikd of the HA set-up.
type haMinikd struct {
	*process
	addr string
	cs   kubernetes.Interface
}

// startHAMinikd runs minikd on the etcd cluster with leader election and
// waits until its /readyz answers 200.
func startHAMinikd(t *testing.T, name, dataDir string, etcdServers []string, extra ...string) *haMinikd {
	t.Helper()
	var m *haMinikd
	// A free port may be taken by another test's process between its
	// choice and minikd's listen: then minikd exits, and starts again on
	// other ports.
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		args := append([]string{"--data-dir", dataDir, "--listen", addr, "--etcd-servers", strings.Join(etcdServers, ","),
			"--leader-elect", "--leader-elect-lease-duration", "10s", "--leader-elect-renew-deadline", "7s", "--leader-elect-retry-period", "1s",
			"--controllers", "deployment,replicaset,serviceaccount", "--nodes", "2", "--simulation-speed", "20", "--kubelet-port", portOf(freeAddr(t)),
			"--service-proxy=false", "--ingress-http", "none", "--ingress-https", "none",
			// Replicas of one API server allocate from one Service range.
			"--service-cluster-ip-range", "127.111.240.0/20"}, extra...)
		m = &haMinikd{process: startChild(t, name, args...), addr: addr}
		exited := false
		waitUntil(t, name+"'s /readyz to answer 200", 60*time.Second, func() bool {
			select {
			case <-m.done:
				exited = true
				return true
			default:
			}
			resp, err := insecure.Get("https://" + addr + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		if !exited {
			break
		}
		if out, _ := os.ReadFile(m.log); attempt < 3 && strings.Contains(string(out), "address already in use") {
			continue
		}
		t.Fatalf("%s exited", name)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dataDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	if m.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return m
}

func portOf(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

// copyDir copies the files of src (one level of subdirectories deep is
// enough for a PKI dir) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func leaseHolder(cs kubernetes.Interface, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func pauseDeployment(name string, replicas int32) *appsv1.Deployment {
	d := webDeployment(name)
	d.Spec.Replicas = ptr.To(replicas)
	d.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10"
	return d
}

// available tells whether a Deployment has all its replicas ready and
// up to date.
func available(cs kubernetes.Interface, name string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	d, err := cs.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
	return err == nil && d.Status.ObservedGeneration == d.Generation &&
		d.Status.ReadyReplicas == *d.Spec.Replicas && d.Status.UpdatedReplicas == *d.Spec.Replicas
}

// TestHAFailsOverWhenAnEtcdMemberAndTheLeadingMinikdAreKilled runs minikd
// the way kube runs its control plane: a three-member etcd cluster and two
// minikd with leader election. During writes through both, it kill -9s the
// etcd leader and the minikd holding the controller-manager Lease: the
// other minikd keeps serving, takes the controllers', scheduler's and
// nodes' Leases, and no acknowledged write is lost.
func TestHAFailsOverWhenAnEtcdMemberAndTheLeadingMinikdAreKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an etcd cluster and two minikd, and waits for a lease to expire")
	}
	members, clients := etcdCluster(t, 3)
	ec := etcdClient(t, clients)

	// Both minikd share one PKI (copied before the second starts), as
	// replicas of one API server do: one kubeconfig, one CA, one
	// service-account key.
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startHAMinikd(t, "minikd-a", dirA, clients)
	copyDir(t, filepath.Join(dirA, "pki"), filepath.Join(dirB, "pki"))
	b := startHAMinikd(t, "minikd-b", dirB, clients)
	byAddr := map[string]*haMinikd{a.addr: a, b.addr: b}
	holderOf := func(lease string, cs kubernetes.Interface) *haMinikd {
		h := leaseHolder(cs, lease)
		return byAddr[h[strings.LastIndex(h, "_")+1:]]
	}
	var leader *haMinikd
	waitUntil(t, "holders of the controller-manager, scheduler and nodes Leases", 30*time.Second, func() bool {
		leader = holderOf("kube-controller-manager", a.cs)
		return leader != nil && holderOf("kube-scheduler", a.cs) != nil && holderOf(server.NodesLease, a.cs) != nil
	})
	survivor := a
	if leader == a {
		survivor = b
	}
	nodesBefore := holderOf(server.NodesLease, a.cs)
	t.Logf("controller-manager Lease held by %s, nodes Lease by %s", leader.name, nodesBefore.name)

	ctx := context.Background()
	if _, err := a.cs.AppsV1().Deployments("default").Create(ctx, pauseDeployment("before", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "deployment before to be available", 45*time.Second, func() bool { return available(b.cs, "before") })

	// Writers create ConfigMaps through both minikd, counting the creates
	// acknowledged (201).
	var (
		mu        sync.Mutex
		acked     []string
		afterKill atomic.Int64
		killed    atomic.Bool
		seq       atomic.Int64
	)
	wctx, stopWriters := context.WithCancel(ctx)
	var writers sync.WaitGroup
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; wctx.Err() == nil; i++ {
				cs := a.cs
				if i%2 == 1 {
					cs = b.cs
				}
				name := fmt.Sprintf("w-%d", seq.Add(1))
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"ha-test": "true"}}}
				if _, err := cs.CoreV1().ConfigMaps("default").Create(wctx, cm, metav1.CreateOptions{}); err == nil {
					mu.Lock()
					acked = append(acked, name)
					mu.Unlock()
					if killed.Load() {
						afterKill.Add(1)
					}
				}
			}
		}()
	}
	defer func() { stopWriters(); writers.Wait() }()
	ackedCount := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	waitUntil(t, "100 acknowledged writes", 30*time.Second, func() bool { return ackedCount() >= 100 })

	// Kill -9 the etcd leader and the leading minikd.
	var lead int
	waitUntil(t, "an etcd leader", 10*time.Second, func() bool { lead = etcdLeader(ec, clients); return lead >= 0 })
	members[lead].kill()
	leader.kill()
	killedAt := time.Now()
	killed.Store(true)
	t.Logf("killed etcd member %s (the etcd leader) and %s (the controller-manager Lease holder)", members[lead].name, leader.name)

	// The survivor keeps serving: a Deployment created now gets its
	// ReplicaSet once the survivor's controllers run, its pods bound once
	// its scheduler runs, Running on the nodes of the Lease holder.
	// Writes in flight when the etcd leader died fail or time out until
	// the two members left elect a new one; a client tries again.
	var writeGap time.Duration
	waitUntil(t, "the survivor to take a write", 30*time.Second, func() bool {
		_, err := survivor.cs.AppsV1().Deployments("default").Create(ctx, pauseDeployment("after", 2), metav1.CreateOptions{})
		writeGap = time.Since(killedAt)
		return err == nil || apierrors.IsAlreadyExists(err)
	})
	var controllersAt, schedulerAt time.Duration
	waitUntil(t, "the survivor's controllers to create deployment after's ReplicaSet", 30*time.Second, func() bool {
		l, err := survivor.cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=after"})
		if err == nil && len(l.Items) == 1 {
			controllersAt = time.Since(killedAt)
			return true
		}
		return false
	})
	waitUntil(t, "the survivor's scheduler to bind deployment after's pods", 30*time.Second, func() bool {
		l, err := survivor.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=after"})
		if err != nil || len(l.Items) == 0 {
			return false
		}
		for _, p := range l.Items {
			if p.Spec.NodeName == "" {
				return false
			}
		}
		schedulerAt = time.Since(killedAt)
		return true
	})
	waitUntil(t, "deployment after to be available", 45*time.Second, func() bool { return available(survivor.cs, "after") })
	convergedAt := time.Since(killedAt)
	for _, lease := range []string{"kube-controller-manager", "kube-scheduler", server.NodesLease} {
		if h := holderOf(lease, survivor.cs); h != survivor {
			t.Fatalf("Lease %s is held by %v after the failover, want the survivor %s", lease, h, survivor.name)
		}
	}
	// The survivor's nodes renew the Node Leases, so pods created before
	// the failover run on its nodes too.
	waitUntil(t, "the nodes' Leases renewed after the kill", 30*time.Second, func() bool {
		l, err := survivor.cs.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 2 {
			return false
		}
		for _, lease := range l.Items {
			if lease.Spec.RenewTime == nil || lease.Spec.RenewTime.Time.Before(killedAt) {
				return false
			}
		}
		return true
	})
	if !available(survivor.cs, "before") {
		t.Fatal("deployment before is no longer available after the failover")
	}

	// Every acknowledged write is there.
	waitUntil(t, "50 writes acknowledged after the kill", 30*time.Second, func() bool { return afterKill.Load() >= 50 })
	stopWriters()
	writers.Wait()
	l, err := survivor.cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: "ha-test"})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, cm := range l.Items {
		found[cm.Name] = true
	}
	var lost []string
	for _, name := range acked {
		if !found[name] {
			lost = append(lost, name)
		}
	}
	t.Logf("failover after kill -9: the survivor took a write after %s, controllers acting after %s, scheduler after %s, deployment converged after %s; %d writes acknowledged (%d after the kill), %d lost",
		writeGap.Round(100*time.Millisecond), controllersAt.Round(100*time.Millisecond), schedulerAt.Round(100*time.Millisecond), convergedAt.Round(100*time.Millisecond), len(acked), afterKill.Load(), len(lost))
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged writes lost, e.g. %v", len(lost), lost[0])
	}
	// The survivor still reads as ready: its storage checks pass on the
	// two members left.
	resp, err := insecure.Get("https://" + survivor.addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("survivor's /readyz = %d", resp.StatusCode)
	}
}
