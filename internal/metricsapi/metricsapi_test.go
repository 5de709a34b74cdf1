package metricsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"minik/internal/nodeagent/runtime"
	"minik/internal/testserver"
)

const node = "minik-node-1"

// workload are pods whose usage the rules (or the annotation) decide.
func workload(ns string) []*corev1.Pod {
	pod := func(name, image string, command []string, limits corev1.ResourceList, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}, Annotations: annotations},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
				Name: "app", Image: image, Command: command, Resources: corev1.ResourceRequirements{Limits: limits},
			}}},
		}
	}
	return []*corev1.Pod{
		pod("idle", "nginx:1.27", nil, nil, nil),
		pod("sleeper", "busybox:1.36", []string{"sleep", "3600"}, nil, nil),
		pod("busy", "busybox:1.36", []string{"sh", "-c", "while true; do :; done"}, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}, nil),
		pod("stress", "polinux/stress", []string{"stress", "--cpu", "2", "--vm", "1", "--vm-bytes", "128M"}, nil, nil),
		pod("pinned", "nginx:1.27", nil, nil, map[string]string{runtime.UsageAnnotation: "app=cpu:250m,memory:64Mi"}),
	}
}

// want are the figures the rules give each pod's container: CPU in
// millicores, working set in bytes.
var want = map[string]struct{ milliCPU, memory int64 }{
	"idle":    {1, 6 << 20},
	"sleeper": {0, 256 << 10},
	"busy":    {500, 512<<10 + 64<<10}, // a shell and its loop, capped at 500m
	"stress":  {3000, 256<<10 + 128<<20 + 1<<20},
	"pinned":  {250, 64 << 20},
}

func TestMetricsAPIServesTheNodesSummaries(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Nodes: 2})
	cs := srv.Client(t)
	mc, err := metricsclient.NewForConfig(srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := "top"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range workload(ns) {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "minik-node-2", Containers: []corev1.Container{{
			Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "3600"},
		}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, elsewhere, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var list *metricsv1beta1.PodMetricsList
	poll(t, "metrics of every pod", func(ctx context.Context) (bool, error) {
		list, err = mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsServiceUnavailable(err) {
			return false, nil
		}
		return err == nil && len(list.Items) == len(want), err
	})

	t.Run("each container uses what its program does", func(t *testing.T) {
		for _, m := range list.Items {
			w := want[m.Name]
			if len(m.Containers) != 1 || m.Containers[0].Name != "app" {
				t.Fatalf("%s: containers %+v", m.Name, m.Containers)
			}
			u := m.Containers[0].Usage
			cpu, mem := u[corev1.ResourceCPU], u[corev1.ResourceMemory]
			if cpu.MilliValue() != w.milliCPU || mem.Value() != w.memory {
				t.Errorf("%s: cpu %s memory %s, want %dm and %d bytes", m.Name, cpu.String(), mem.String(), w.milliCPU, w.memory)
			}
			if m.Labels["app"] != m.Name || m.Window.Duration != 15*time.Second || m.Timestamp.IsZero() {
				t.Errorf("%s: labels %v window %v timestamp %v", m.Name, m.Labels, m.Window, m.Timestamp)
			}
		}
	})

	t.Run("the node's summary gives the same figures", func(t *testing.T) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sum := summary(t, n)
		for _, ps := range sum.Pods {
			if ps.PodRef.Namespace != ns {
				continue
			}
			w := want[ps.PodRef.Name]
			c := ps.Containers[0]
			if int64(*c.CPU.UsageNanoCores/1_000_000) != w.milliCPU || int64(*c.Memory.WorkingSetBytes) != w.memory {
				t.Errorf("%s: summary cpu %d nanocores, working set %d", ps.PodRef.Name, *c.CPU.UsageNanoCores, *c.Memory.WorkingSetBytes)
			}
		}
		// Cumulative CPU grows with the containers' run time.
		busy := func(s *statsv1alpha1.Summary) uint64 {
			for _, ps := range s.Pods {
				if ps.PodRef.Name == "busy" {
					return *ps.Containers[0].CPU.UsageCoreNanoSeconds
				}
			}
			t.Fatal("no busy pod in the summary")
			return 0
		}
		first := busy(sum)
		poll(t, "cumulative CPU to grow", func(context.Context) (bool, error) {
			return busy(summary(t, n)) > first, nil
		})
		nm, err := mc.MetricsV1beta1().NodeMetricses().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cpu := nm.Usage[corev1.ResourceCPU]
		var pods int64
		for _, w := range want {
			pods += w.milliCPU
		}
		if cpu.MilliValue() != pods+45 {
			t.Errorf("node cpu %s, want the pods' %dm and the node's own 45m", cpu.String(), pods)
		}
	})

	t.Run("one scrape round serves every node", func(t *testing.T) {
		poll(t, "the pod on the other node", func(ctx context.Context) (bool, error) {
			_, err := mc.MetricsV1beta1().PodMetricses("default").Get(ctx, "elsewhere", metav1.GetOptions{})
			return err == nil, nil
		})
		// A get of one node's metrics, then at once a list of every pod:
		// the round the get started covers the other node too.
		if _, err := mc.MetricsV1beta1().NodeMetricses().Get(ctx, node, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		l, err := mc.MetricsV1beta1().PodMetricses("").List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != len(want)+1 {
			t.Fatalf("list -A after a node get: %v, %d items", err, len(l.Items))
		}
	})

	t.Run("label and field selectors choose pods", func(t *testing.T) {
		l, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app in (busy,idle)"})
		if err != nil || len(l.Items) != 2 || l.Items[0].Name != "busy" || l.Items[1].Name != "idle" {
			t.Fatalf("list -l: %v %+v", err, l)
		}
		l, err = mc.MetricsV1beta1().PodMetricses("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=stress"})
		if err != nil || len(l.Items) != 1 || l.Items[0].Namespace != ns {
			t.Fatalf("list -A --field-selector: %v %+v", err, l)
		}
		nl, err := mc.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/hostname=" + node})
		if err != nil || len(nl.Items) != 1 || nl.Items[0].Name != node {
			t.Fatalf("node list -l: %v %+v", err, nl)
		}
		if _, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app in"}); !apierrors.IsBadRequest(err) {
			t.Fatalf("bad selector: %v", err)
		}
	})

	t.Run("a missing pod is NotFound and writes are not allowed", func(t *testing.T) {
		_, err := mc.MetricsV1beta1().PodMetricses(ns).Get(ctx, "nope", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || err.Error() != `pods "nope" not found` {
			t.Fatalf("get missing: %v", err)
		}
		_, err = mc.MetricsV1beta1().NodeMetricses().Get(ctx, "nope", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || err.Error() != `node "nope" not found` {
			t.Fatalf("get missing node: %v", err)
		}
		// A pod that does not run has no figures.
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "unbound"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, "the provider to see the unbound pod", func(ctx context.Context) (bool, error) {
			_, err := mc.MetricsV1beta1().PodMetricses(ns).Get(ctx, "unbound", metav1.GetOptions{})
			if err != nil && err.Error() == `pods "unbound" not found` {
				return false, nil
			}
			if !apierrors.IsNotFound(err) || err.Error() != `podmetrics.metrics.k8s.io "top/unbound" not found` {
				return false, fmt.Errorf("get unbound: %v", err)
			}
			return true, nil
		})
		rc := mc.MetricsV1beta1().RESTClient()
		err = rc.Delete().Namespace(ns).Resource("pods").Name("idle").Do(ctx).Error()
		if !apierrors.IsMethodNotSupported(err) {
			t.Fatalf("delete: %v", err)
		}
		_, err = mc.MetricsV1beta1().PodMetricses(ns).Watch(ctx, metav1.ListOptions{})
		if !apierrors.IsMethodNotSupported(err) {
			t.Fatalf("watch: %v", err)
		}
	})

	t.Run("RBAC: view reads metrics, nobody else", func(t *testing.T) {
		if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "jane-view"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "jane"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		as := func(user string) metricsclient.Interface {
			c := rest.CopyConfig(srv.RESTConfig)
			c.Impersonate = rest.ImpersonationConfig{UserName: user}
			m, err := metricsclient.NewForConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		poll(t, "view to aggregate metrics.k8s.io", func(ctx context.Context) (bool, error) {
			_, err := as("jane").MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{})
			if apierrors.IsForbidden(err) {
				return false, nil
			}
			return err == nil, err
		})
		_, err := as("bob").MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "bob" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "top"`) {
			t.Fatalf("bob: %v", err)
		}
	})

	t.Run("discovery lists the group", func(t *testing.T) {
		rl, err := cs.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rl.APIResources {
			got[r.Name] = r.Kind + " " + strings.Join(r.Verbs, ",")
		}
		if got["nodes"] != "NodeMetrics get,list" || got["pods"] != "PodMetrics get,list" {
			t.Fatalf("discovery: %v", got)
		}
		_, lists, err := cs.Discovery().ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, l := range lists {
			found = found || l.GroupVersion == "metrics.k8s.io/v1beta1" && len(l.APIResources) == 2
		}
		if !found {
			t.Fatal("aggregated discovery has no metrics.k8s.io/v1beta1")
		}
		doc, err := cs.CoreV1().RESTClient().Get().AbsPath("/openapi/v3/apis/metrics.k8s.io/v1beta1").DoRaw(ctx)
		if err != nil || !strings.Contains(string(doc), "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods") {
			t.Fatalf("openapi v3 of metrics.k8s.io/v1beta1: %v %.200s", err, doc)
		}
	})

	t.Run("kubectl top", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("no kubectl")
		}
		run := func(args ...string) string {
			cmd := exec.Command(kubectl, append([]string{"--kubeconfig", srv.KubeconfigPath}, args...)...)
			cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl %v: %v\n%s", args, err, out)
			}
			return string(out)
		}
		out := run("top", "pods", "-n", ns, "--containers")
		t.Logf("kubectl top pods --containers:\n%s", out)
		for _, line := range []string{"stress   app    3000m        129Mi", "pinned   app    250m         64Mi"} {
			if !strings.Contains(collapse(out), collapse(line)) {
				t.Errorf("kubectl top pods --containers: no %q in\n%s", line, out)
			}
		}
		out = run("top", "pods", "-A", "-l", "app=busy")
		t.Logf("kubectl top pods -A -l app=busy:\n%s", out)
		if !strings.Contains(collapse(out), collapse("top busy 500m 0Mi")) {
			t.Errorf("kubectl top pods -A -l: %s", out)
		}
		out = run("get", "podmetrics", "-n", ns, "-l", "app=pinned")
		t.Logf("kubectl get podmetrics -l app=pinned:\n%s", out)
		if !strings.Contains(collapse(out), collapse("NAME CPU MEMORY WINDOW pinned 250m 64Mi 15s")) {
			t.Errorf("kubectl get podmetrics: %s", out)
		}
		out = run("top", "nodes")
		t.Logf("kubectl top nodes:\n%s", out)
		if !strings.Contains(out, node) || !strings.Contains(out, "CPU(cores)") {
			t.Errorf("kubectl top nodes: %s", out)
		}
	})
}

// collapse squeezes runs of spaces, so that columns compare by content.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// summary reads a node's /stats/summary from its endpoint.
func summary(t *testing.T, n *corev1.Node) *statsv1alpha1.Summary {
	t.Helper()
	var ip string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip = a.Address
		}
	}
	url := fmt.Sprintf("http://%s/stats/summary", net.JoinHostPort(ip, strconv.Itoa(int(n.Status.DaemonEndpoints.KubeletEndpoint.Port))))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s statsv1alpha1.Summary
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Node.NodeName != n.Name || s.Node.CPU == nil || s.Node.Memory == nil || s.Node.Memory.AvailableBytes == nil {
		t.Fatalf("summary node: %+v", s.Node)
	}
	return &s
}

func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
