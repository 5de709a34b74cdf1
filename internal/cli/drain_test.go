package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/disruption"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

// readyPods lists the ready, not terminating pods of app=web by node.
func readyPods(ctx context.Context, t *testing.T, cs kubernetes.Interface) map[string][]string {
	t.Helper()
	pods, err := cs.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Name)
			}
		}
	}
	return out
}

func runCLI(t *testing.T, kubeconfig string, args ...string) (string, string, int) {
	t.Helper()
	streams, _, stdout, stderr := TestStreams()
	code := Run(context.Background(), append([]string{"--kubeconfig", kubeconfig}, args...), streams)
	return stdout.String(), stderr.String(), code
}

// TestDrainHonoursTheBudget drains a node running all three pods of a
// Deployment whose budget keeps two available: the pods go one by one,
// each eviction waiting (429, retried) until the replacement of the
// previous one is Ready on the other node.
func TestDrainHonoursTheBudget(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{disruption.Name, "deployment", replicaset.Name}, Scheduler: true, Nodes: 2,
	})
	cs := srv.Client(t)
	ctx := t.Context()

	ctrltest.Wait(t, "2 ready nodes", func() bool {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 2 {
			return false
		}
		for _, n := range nodes.Items {
			ready := false
			for _, c := range n.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready {
				return false
			}
		}
		return true
	})
	// Every pod starts on node 1: node 2 is cordoned meanwhile.
	if out, errOut, code := runCLI(t, srv.KubeconfigPath, "cordon", "minik-node-2"); out != "node/minik-node-2 cordoned\n" || code != 0 {
		t.Fatalf("cordon: %q %q %d", out, errOut, code)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	replicas := int32(3)
	labels := map[string]string{"app": "web"}
	if _, err := cs.AppsV1().Deployments("demo").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "3 pods ready on minik-node-1", func() bool { return len(readyPods(ctx, t, cs)["minik-node-1"]) == 3 })
	if out, _, _ := runCLI(t, srv.KubeconfigPath, "uncordon", "minik-node-2"); out != "node/minik-node-2 uncordoned\n" {
		t.Fatalf("uncordon: %q", out)
	}
	two := intstr.FromInt32(2)
	if _, err := cs.PolicyV1().PodDisruptionBudgets("demo").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the budget allowing one disruption", func() bool {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets("demo").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.DisruptionsAllowed == 1 && pdb.Status.CurrentHealthy == 3
	})
	before := readyPods(ctx, t, cs)["minik-node-1"]

	streams, _, stdout, stderr := TestStreams()
	flags := NewConfigFlags()
	f := NewFactory(flags, streams)
	o := newDrainOptions(streams)
	o.EvictRetryDelay, o.PollInterval = 50*time.Millisecond, 20*time.Millisecond
	root := &cobra.Command{Use: "minikctl", SilenceErrors: true, SilenceUsage: true}
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newCmdDrain(f, o))
	root.SetArgs([]string{"--kubeconfig", srv.KubeconfigPath, "drain", "minik-node-1"})
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("drain: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}

	out := stdout.String()
	if !strings.HasPrefix(out, "node/minik-node-1 cordoned\n") || !strings.HasSuffix(out, "node/minik-node-1 drained\n") {
		t.Errorf("drain output:\n%s", out)
	}
	for _, name := range before {
		for _, want := range []string{"evicting pod demo/" + name + "\n", "pod/" + name + " evicted\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("drain output lacks %q:\n%s", want, out)
			}
		}
	}
	retry := `(will retry after 50ms): Cannot evict pod as it would violate the pod's disruption budget.`
	if !strings.Contains(stderr.String(), retry) {
		t.Errorf("no eviction was refused and retried; stderr:\n%s", stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(line, `error when evicting pods/"web-`) || !strings.HasSuffix(line, ` -n "demo" `+retry) {
			t.Errorf("unexpected stderr line %q", line)
		}
	}
	if pods := readyPods(ctx, t, cs); len(pods["minik-node-1"]) != 0 {
		t.Errorf("pods left on the drained node: %v", pods["minik-node-1"])
	}
	ctrltest.Wait(t, "3 pods ready on minik-node-2", func() bool { return len(readyPods(ctx, t, cs)["minik-node-2"]) == 3 })
}
