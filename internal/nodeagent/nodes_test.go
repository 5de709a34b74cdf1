package nodeagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"minik/internal/nodeagent"
	"minik/internal/pki"
	"minik/internal/testserver"
)

// startPool runs nodes in the test with node identities from the
// server's CA; they stop when the test ends.
func startPool(t testing.TB, srv *testserver.Server, cfg nodeagent.Config, wrap ...func(*rest.Config)) *nodeagent.Pool {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientConfig = func(node string) (*rest.Config, error) {
		kp, err := ca.SignClient("system:node:"+node, []string{"system:nodes"}, 0)
		if err != nil {
			return nil, err
		}
		c := rest.CopyConfig(srv.RESTConfig)
		c.CertData, c.KeyData = kp.CertPEM, kp.KeyPEM
		for _, w := range wrap {
			w(c)
		}
		return c, nil
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.FirstBlock == 0 {
		cfg.FirstBlock = testserver.NodeBlock()
	}
	if cfg.AdminConfig == nil {
		cfg.AdminConfig = srv.RESTConfig
	}
	pool, err := nodeagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("pool: %v", err)
		}
	})
	select {
	case <-pool.Ready():
	case err := <-done:
		t.Fatalf("pool did not start: %v", err)
	case <-time.After(5 * time.Minute):
		t.Fatal("pool not ready after 5m")
	}
	return pool
}

// TestNodesRegister: minikd's nodes register as a kubelet does and act as
// system:node:<name>.
func TestNodesRegister(t *testing.T) {
	srv, cs := cluster(t, 3)
	ctx := context.Background()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("%d nodes", len(nodes.Items))
	}
	zones := map[string]bool{}
	cidrs := map[string]bool{}
	for _, n := range nodes.Items {
		t.Run(n.Name, func(t *testing.T) {
			for res, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "8Gi", corev1.ResourcePods: "110"} {
				if q := n.Status.Capacity[res]; q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("capacity %s = %s", res, q.String())
				}
				if q := n.Status.Allocatable[res]; q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("allocatable %s = %s", res, q.String())
				}
			}
			for k, v := range map[string]string{corev1.LabelHostname: n.Name, corev1.LabelOSStable: "linux"} {
				if n.Labels[k] != v {
					t.Errorf("label %s = %q", k, n.Labels[k])
				}
			}
			if n.Labels[corev1.LabelArchStable] == "" || n.Labels[corev1.LabelTopologyZone] == "" {
				t.Errorf("labels %v", n.Labels)
			}
			zones[n.Labels[corev1.LabelTopologyZone]] = true
			var types []string
			for _, c := range n.Status.Conditions {
				types = append(types, string(c.Type)+"="+string(c.Status))
			}
			if got := strings.Join(types, ","); got != "MemoryPressure=False,DiskPressure=False,PIDPressure=False,Ready=True" {
				t.Errorf("conditions %s", got)
			}
			if len(n.Status.Addresses) != 2 || n.Status.Addresses[0].Type != corev1.NodeInternalIP || !strings.HasPrefix(n.Status.Addresses[0].Address, "127.") ||
				n.Status.Addresses[1] != (corev1.NodeAddress{Type: corev1.NodeHostName, Address: n.Name}) {
				t.Errorf("addresses %+v", n.Status.Addresses)
			}
			info := n.Status.NodeInfo
			if info.KubeletVersion != "v1.37.2" || info.ContainerRuntimeVersion != "minik://0.1.0" || info.OperatingSystem != "linux" ||
				info.Architecture == "" || info.OSImage == "" || info.KernelVersion == "" || info.MachineID == "" {
				t.Errorf("nodeInfo %+v", info)
			}
			if n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
				t.Errorf("kubelet port %d", n.Status.DaemonEndpoints.KubeletEndpoint.Port)
			}
			ip := strings.TrimSuffix(n.Status.Addresses[0].Address, "1")
			if n.Spec.PodCIDR != ip+"0/24" || len(n.Spec.PodCIDRs) != 1 {
				t.Errorf("podCIDR %s for address %s", n.Spec.PodCIDR, n.Status.Addresses[0].Address)
			}
			cidrs[n.Spec.PodCIDR] = true
			var lease *coordinationv1.Lease
			waitFor(t, 10*time.Second, "the lease of "+n.Name, func(ctx context.Context) (bool, error) {
				l, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, n.Name, metav1.GetOptions{})
				lease = l
				return err == nil, nil
			})
			if *lease.Spec.HolderIdentity != n.Name || *lease.Spec.LeaseDurationSeconds != 40 || lease.Spec.RenewTime == nil ||
				len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != n.UID {
				t.Errorf("lease %+v", lease)
			}
		})
	}
	if len(zones) != 3 || len(cidrs) != 3 {
		t.Errorf("zones %v, cidrs %v", zones, cidrs)
	}
	// A node acts as itself: the audit log (flushed every 50ms) names it.
	waitFor(t, 10*time.Second, "the audit log to show system:node:minik-node-1", func(context.Context) (bool, error) {
		data, err := os.ReadFile(filepath.Join(srv.DataDir, "audit.log"))
		return err == nil && strings.Contains(string(data), `"username":"system:node:minik-node-1"`), nil
	})
}

// TestLeaseRenewalAndTemplates: leases are renewed on their interval, and
// node templates shape the nodes.
func TestLeaseRenewalAndTemplates(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	templates, err := nodeagent.ParseNodeTemplates([]byte(`
apiVersion: v1
kind: Node
metadata:
  labels:
    node-role.kubernetes.io/edge: ""
    topology.kubernetes.io/zone: edge-a
spec:
  taints:
    - key: dedicated
      value: edge
      effect: NoSchedule
status:
  capacity:
    cpu: "2"
    memory: 4Gi
  nodeInfo:
    osImage: Edge OS 1.0
---
apiVersion: v1
kind: Node
metadata:
  labels:
    topology.kubernetes.io/zone: edge-b
`))
	if err != nil {
		t.Fatal(err)
	}
	timing := nodeagent.FastTiming()
	timing.LeaseRenewInterval = 100 * time.Millisecond
	startPool(t, srv, nodeagent.Config{Nodes: 3, NamePrefix: "edge-", Templates: templates, Timing: timing})
	ctx := context.Background()
	n1, err := cs.CoreV1().Nodes().Get(ctx, "edge-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n1.Labels["node-role.kubernetes.io/edge"]; !ok || n1.Labels[corev1.LabelTopologyZone] != "edge-a" || n1.Labels[corev1.LabelHostname] != "edge-1" {
		t.Errorf("labels %v", n1.Labels)
	}
	if len(n1.Spec.Taints) != 1 || n1.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("taints %+v", n1.Spec.Taints)
	}
	if q := n1.Status.Allocatable[corev1.ResourceCPU]; q.String() != "2" || n1.Status.NodeInfo.OSImage != "Edge OS 1.0" {
		t.Errorf("allocatable cpu %s, osImage %q", q.String(), n1.Status.NodeInfo.OSImage)
	}
	if q := n1.Status.Allocatable[corev1.ResourcePods]; q.String() != "110" {
		t.Errorf("pods %s", q.String())
	}
	n2, _ := cs.CoreV1().Nodes().Get(ctx, "edge-2", metav1.GetOptions{})
	n3, _ := cs.CoreV1().Nodes().Get(ctx, "edge-3", metav1.GetOptions{})
	if n2.Labels[corev1.LabelTopologyZone] != "edge-b" || n3.Labels[corev1.LabelTopologyZone] != "edge-a" || len(n2.Spec.Taints) != 0 {
		t.Errorf("templates cycle: %v %v %v", n2.Labels, n3.Labels, n2.Spec.Taints)
	}
	first, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, "edge-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the lease to be renewed", func(ctx context.Context) (bool, error) {
		l, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, "edge-1", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.After(first.Spec.RenewTime.Time), err
	})
}
