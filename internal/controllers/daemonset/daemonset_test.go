package daemonset_test

import (
	"context"
	"slices"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/daemonset"
	"minik/internal/testserver"
)

func newDS(name, image string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: image}}},
			},
		},
	}
}

// podNodes returns, sorted, the nodes the DaemonSet's live pods target
// (bound or pinned by affinity).
func podNodes(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, app string) []string {
	t.Helper()
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		out = append(out, pinnedNode(&p))
	}
	sort.Strings(out)
	return out
}

func pinnedNode(p *corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" {
		return ""
	}
	return terms[0].MatchFields[0].Values[0]
}

func TestDaemonSetRunsOnePodPerEligibleNode(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{daemonset.Name}, Scheduler: true, Nodes: 3})
	cs, ctx := srv.Client(t), t.Context()
	const ns = "ds"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "3 nodes", func() bool {
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 3
	})
	taint := `{"spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}}`
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "minik-node-3", types.MergePatchType, []byte(taint), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().DaemonSets(ns).Create(ctx, newDS("agent", "fluent-bit:3.1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ds *appsv1.DaemonSet
	ctrltest.Wait(t, "2 of 2 daemon pods ready", func() bool {
		var err error
		ds, err = cs.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := ds.Status
		return st.ObservedGeneration == ds.Generation && st.DesiredNumberScheduled == 2 && st.NumberReady == 2 && st.NumberAvailable == 2 && st.UpdatedNumberScheduled == 2
	})

	t.Run("the tainted node without a toleration is skipped", func(t *testing.T) {
		if got, want := podNodes(ctx, t, cs, ns, "agent"), []string{"minik-node-1", "minik-node-2"}; !slices.Equal(got, want) {
			t.Errorf("pods on %v, want %v", got, want)
		}
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Items {
			if p.Spec.NodeName != pinnedNode(&p) {
				t.Errorf("pod %s bound to %q, pinned to %q", p.Name, p.Spec.NodeName, pinnedNode(&p))
			}
			var keys []string
			for _, tol := range p.Spec.Tolerations {
				keys = append(keys, tol.Key+":"+string(tol.Effect))
			}
			for _, want := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unschedulable:NoSchedule"} {
				if !slices.Contains(keys, want) {
					t.Errorf("pod %s tolerations %v lack %s", p.Name, keys, want)
				}
			}
		}
	})

	t.Run("a node added later gets a pod", func(t *testing.T) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "late-node", Labels: map[string]string{"kubernetes.io/hostname": "late-node"}}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "a pod for late-node", func() bool {
			return slices.Contains(podNodes(ctx, t, cs, ns, "agent"), "late-node")
		})
		if err := cs.CoreV1().Nodes().Delete(ctx, "late-node", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "late-node's pod gone", func() bool {
			return slices.Equal(podNodes(ctx, t, cs, ns, "agent"), []string{"minik-node-1", "minik-node-2"})
		})
	})

	t.Run("an image update replaces the pods and records a revision", func(t *testing.T) {
		patch := `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"fluent-bit:3.2"}]}}}}`
		if _, err := cs.AppsV1().DaemonSets(ns).Patch(ctx, "agent", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "2 updated daemon pods ready", func() bool {
			d, err := cs.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := d.Status
			if st.ObservedGeneration != d.Generation || st.UpdatedNumberScheduled != 2 || st.NumberAvailable != 2 {
				return false
			}
			l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
			if err != nil {
				t.Fatal(err)
			}
			return len(l.Items) == 2 && l.Items[0].Spec.Containers[0].Image == "fluent-bit:3.2" && l.Items[1].Spec.Containers[0].Image == "fluent-bit:3.2"
		})
		revs, err := cs.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var numbers []int64
		for _, r := range revs.Items {
			numbers = append(numbers, r.Revision)
		}
		slices.Sort(numbers)
		if !slices.Equal(numbers, []int64{1, 2}) {
			t.Errorf("revisions %v, want [1 2]", numbers)
		}
	})
}
