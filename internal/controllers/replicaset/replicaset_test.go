package replicaset_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

func startServer(t *testing.T) (kubernetes.Interface, context.Context) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{replicaset.Name}})
	return srv.Client(t), t.Context()
}

func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func newRS(name string, replicas int32, labels map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

func listPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, selector string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

// scaleTo sets a ReplicaSet's spec.replicas with a patch, which no status
// update of the controller's can conflict with.
func scaleTo(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	if _, err := cs.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func getRS(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) *appsv1.ReplicaSet {
	t.Helper()
	rs, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// events returns the messages of the events of reason about the object
// named name, from the replicaset controller.
func events(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, reason string) []string {
	t.Helper()
	l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.Reason == reason && e.Source.Component == replicaset.Component {
			out = append(out, e.Message)
		}
	}
	sort.Strings(out)
	return out
}

var podName = regexp.MustCompile(`^web-[a-z0-9]{5}$`)

func TestReplicaSetCreatesOwnedPods(t *testing.T) {
	cs, ctx := startServer(t)
	const ns = "rs-create"
	createNamespace(ctx, t, cs, ns)
	rs := newRS("web", 3, map[string]string{"app": "web"})
	rs.Spec.Template.Labels = map[string]string{"app": "web", "tier": "front"}
	rs.Spec.Template.Annotations = map[string]string{"team": "shop"}
	rs, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var pods []corev1.Pod
	ctrltest.Wait(t, "3 pods", func() bool { pods = listPods(ctx, t, cs, ns, "app=web"); return len(pods) == 3 })
	var names []string
	for _, p := range pods {
		names = append(names, "Created pod: "+p.Name)
		if !podName.MatchString(p.Name) || p.GenerateName != "web-" {
			t.Errorf("pod %s (generateName %q) is not named <rs>-<5 random chars>", p.Name, p.GenerateName)
		}
		want := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: rs.UID,
			Controller: new(true), BlockOwnerDeletion: new(true)}}
		if !equalRefs(p.OwnerReferences, want) {
			t.Errorf("pod %s owner references = %+v, want %+v", p.Name, p.OwnerReferences, want)
		}
		if p.Labels["app"] != "web" || p.Labels["tier"] != "front" || len(p.Labels) != 2 || p.Annotations["team"] != "shop" {
			t.Errorf("pod %s labels %v, annotations %v: not the template's", p.Name, p.Labels, p.Annotations)
		}
	}

	t.Run("each creation is reported as an event", func(t *testing.T) {
		sort.Strings(names)
		ctrltest.Wait(t, "3 SuccessfulCreate events", func() bool {
			return slices.Equal(events(ctx, t, cs, ns, "web", replicaset.ReasonSuccessfulCreate), names)
		})
	})

	t.Run("status counts the pods, then their readiness", func(t *testing.T) {
		ctrltest.Wait(t, "status replicas 3", func() bool {
			s := getRS(ctx, t, cs, ns, "web")
			return s.Status.Replicas == 3 && s.Status.FullyLabeledReplicas == 3 && s.Status.ObservedGeneration == s.Generation
		})
		if s := getRS(ctx, t, cs, ns, "web").Status; s.ReadyReplicas != 0 || s.AvailableReplicas != 0 {
			t.Errorf("ready %d, available %d before any pod is ready", s.ReadyReplicas, s.AvailableReplicas)
		}
		if n := ctrltest.MarkPodsReady(ctx, t, cs, ns, "app=web"); n != 3 {
			t.Fatalf("marked %d pods ready, want 3", n)
		}
		ctrltest.Wait(t, "3 ready and available replicas", func() bool {
			s := getRS(ctx, t, cs, ns, "web").Status
			return s.ReadyReplicas == 3 && s.AvailableReplicas == 3
		})
	})

	t.Run("a pod relabelled so that it lacks a template label still counts, but not as fully labelled", func(t *testing.T) {
		// The selector is app=web; tier=front is the template's only.
		patch := `{"metadata":{"labels":{"tier":"back"}}}`
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, pods[0].Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "fullyLabeledReplicas 2", func() bool {
			s := getRS(ctx, t, cs, ns, "web").Status
			return s.Replicas == 3 && s.FullyLabeledReplicas == 2
		})
	})
}

func equalRefs(got, want []metav1.OwnerReference) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.APIVersion != w.APIVersion || g.Kind != w.Kind || g.Name != w.Name || g.UID != w.UID ||
			g.Controller == nil || *g.Controller != *w.Controller ||
			g.BlockOwnerDeletion == nil || *g.BlockOwnerDeletion != *w.BlockOwnerDeletion {
			return false
		}
	}
	return true
}

func TestReplicaSetScaling(t *testing.T) {
	cs, ctx := startServer(t)
	const ns = "rs-scale"
	createNamespace(ctx, t, cs, ns)
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, newRS("web", 2, map[string]string{"app": "web"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "2 pods", func() bool { return len(listPods(ctx, t, cs, ns, "app=web")) == 2 })

	if !t.Run("scaling up through the scale subresource creates the missing pods", func(t *testing.T) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			scale, err := cs.AppsV1().ReplicaSets(ns).GetScale(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			scale.Spec.Replicas = 5
			_, err = cs.AppsV1().ReplicaSets(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "5 pods and status replicas 5", func() bool {
			s := getRS(ctx, t, cs, ns, "web")
			return len(listPods(ctx, t, cs, ns, "app=web")) == 5 && s.Status.Replicas == 5 && s.Status.ObservedGeneration == s.Generation
		})
	}) {
		t.FailNow()
	}

	t.Run("scaling down deletes the pods kube would: pending, then cheaper, then ready for less time", func(t *testing.T) {
		pods := listPods(ctx, t, cs, ns, "app=web")
		// pods[0]: ready for an hour, kept.
		// pods[1]: ready for an hour, but a lower deletion cost: deleted.
		// pods[2]: ready for a minute: deleted before pods[0] and pods[3].
		// pods[3]: ready for two hours, kept.
		// pods[4]: still Pending: deleted first.
		for i, since := range map[int]time.Duration{0: time.Hour, 1: time.Hour, 2: time.Minute, 3: 2 * time.Hour} {
			if err := ctrltest.MarkPodReady(ctx, cs, &pods[i], time.Now().Add(-since)); err != nil {
				t.Fatal(err)
			}
		}
		costPatch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"-10"}}}`, corev1.PodDeletionCost)
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, pods[1].Name, types.MergePatchType, []byte(costPatch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "4 ready replicas", func() bool { return getRS(ctx, t, cs, ns, "web").Status.ReadyReplicas == 4 })

		scaleTo(ctx, t, cs, ns, "web", 2)
		ctrltest.Wait(t, "2 pods", func() bool { return len(listPods(ctx, t, cs, ns, "app=web")) == 2 })
		var left []string
		for _, p := range listPods(ctx, t, cs, ns, "app=web") {
			left = append(left, p.Name)
		}
		want := []string{pods[0].Name, pods[3].Name}
		sort.Strings(want)
		if !slices.Equal(left, want) {
			t.Errorf("pods left %v, want %v", left, want)
		}
		deleted := []string{"Deleted pod: " + pods[1].Name, "Deleted pod: " + pods[2].Name, "Deleted pod: " + pods[4].Name}
		sort.Strings(deleted)
		ctrltest.Wait(t, "SuccessfulDelete events", func() bool {
			return slices.Equal(events(ctx, t, cs, ns, "web", replicaset.ReasonSuccessfulDelete), deleted)
		})
		ctrltest.Wait(t, "status replicas 2", func() bool {
			s := getRS(ctx, t, cs, ns, "web").Status
			return s.Replicas == 2 && s.ReadyReplicas == 2 && s.AvailableReplicas == 2
		})
	})

	t.Run("a deleted pod is replaced", func(t *testing.T) {
		pods := listPods(ctx, t, cs, ns, "app=web")
		if err := cs.CoreV1().Pods(ns).Delete(ctx, pods[0].Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "a replacement pod", func() bool {
			now := listPods(ctx, t, cs, ns, "app=web")
			return len(now) == 2 && now[0].Name != pods[0].Name && now[1].Name != pods[0].Name
		})
	})
}

func TestReplicaSetAdoptsAndReleasesPods(t *testing.T) {
	cs, ctx := startServer(t)
	const ns = "rs-adopt"
	createNamespace(ctx, t, cs, ns)
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stray", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
	orphan, err := cs.CoreV1().Pods(ns).Create(ctx, orphan, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Running and ready, the orphan is never the one deleted should the
	// controller create two pods before its informer shows the orphan.
	if err := ctrltest.MarkPodReady(ctx, cs, orphan, time.Now()); err != nil {
		t.Fatal(err)
	}
	rs, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, newRS("web", 2, map[string]string{"app": "web"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("an orphan matching the selector is adopted and counts as a replica", func(t *testing.T) {
		ctrltest.Wait(t, "the orphan adopted and status replicas 2", func() bool {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, "stray", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ref := metav1.GetControllerOf(p)
			return ref != nil && ref.UID == rs.UID && getRS(ctx, t, cs, ns, "web").Status.Replicas == 2 &&
				len(listPods(ctx, t, cs, ns, "app=web")) == 2
		})
	})

	t.Run("a pod relabelled out of the selector is released and replaced", func(t *testing.T) {
		patch := `{"metadata":{"labels":{"app":"debug"}}}`
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "stray", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the pod released and a replacement created", func() bool {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, "stray", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return len(p.OwnerReferences) == 0 && len(listPods(ctx, t, cs, ns, "app=web")) == 2
		})
	})
}

func TestReplicaSetReportsRefusedCreation(t *testing.T) {
	cs, ctx := startServer(t)
	const ns = "rs-refused"
	createNamespace(ctx, t, cs, ns)
	// Template metadata is not validated with the ReplicaSet; pod
	// validation then refuses the unqualified finalizer.
	rs := newRS("web", 3, map[string]string{"app": "web"})
	rs.Spec.Template.Finalizers = []string{"cleanup"}
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var cond *appsv1.ReplicaSetCondition
	ctrltest.Wait(t, "a ReplicaFailure condition", func() bool {
		for _, c := range getRS(ctx, t, cs, ns, "web").Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				cond = &c
				return true
			}
		}
		return false
	})
	if cond.Status != corev1.ConditionTrue || cond.Reason != replicaset.ReasonFailedCreate ||
		!strings.HasPrefix(cond.Message, `Pod "web-`) || !strings.Contains(cond.Message, `metadata.finalizers[0]: Invalid value: "cleanup"`) {
		t.Errorf("condition = %+v, want ReplicaFailure True FailedCreate with the server's message", cond)
	}
	ctrltest.Wait(t, "a FailedCreate event", func() bool {
		evs := events(ctx, t, cs, ns, "web", replicaset.ReasonFailedCreate)
		return len(evs) > 0 && strings.HasPrefix(evs[0], `Error creating: Pod "web-`) && strings.Contains(evs[0], `Invalid value: "cleanup"`)
	})
	if pods := listPods(ctx, t, cs, ns, "app=web"); len(pods) != 0 {
		t.Errorf("%d pods exist", len(pods))
	}

	t.Run("fixing the template creates the pods and clears the condition", func(t *testing.T) {
		patch := `{"spec":{"template":{"metadata":{"finalizers":null}}}}`
		if _, err := cs.AppsV1().ReplicaSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "3 replicas and no ReplicaFailure", func() bool {
			s := getRS(ctx, t, cs, ns, "web").Status
			return s.Replicas == 3 && len(s.Conditions) == 0
		})
	})
}

func TestReplicaSetMinReadySeconds(t *testing.T) {
	cs, ctx := startServer(t)
	const ns = "rs-minready"
	createNamespace(ctx, t, cs, ns)
	rs := newRS("web", 2, map[string]string{"app": "web"})
	rs.Spec.MinReadySeconds = 1
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "2 pods", func() bool { return len(listPods(ctx, t, cs, ns, "app=web")) == 2 })
	// The pods' Ready lastTransitionTime as the API keeps it: whole
	// seconds, so they may become available up to a second before
	// time.Now()+minReadySeconds.
	marked := time.Now().Truncate(time.Second)
	ctrltest.MarkPodsReady(ctx, t, cs, ns, "app=web")
	ctrltest.Wait(t, "2 ready replicas", func() bool { return getRS(ctx, t, cs, ns, "web").Status.ReadyReplicas == 2 })
	// Nothing changes on the pods after this: only the controller's own
	// requeue after minReadySeconds can make them available.
	ctrltest.Wait(t, "2 available replicas", func() bool { return getRS(ctx, t, cs, ns, "web").Status.AvailableReplicas == 2 })
	if waited := time.Since(marked); waited < time.Second {
		t.Errorf("pods counted available %v after becoming ready, before minReadySeconds (1s)", waited)
	}
}

func TestReplicaSetDeletedPodsAreNotCountedWhileTerminating(t *testing.T) {
	cs, ctx := startServer(t)
	const ns = "rs-terminating"
	createNamespace(ctx, t, cs, ns)
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, newRS("web", 1, map[string]string{"app": "web"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	ctrltest.Wait(t, "1 pod", func() bool { pods = listPods(ctx, t, cs, ns, "app=web"); return len(pods) == 1 })
	// Bound to a node, the pod is deleted gracefully: it stays, marked,
	// until its kubelet (absent here) confirms.
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pods[0].Name}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := cs.CoreV1().Pods(ns).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, pods[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "a replacement and one terminating replica", func() bool {
		s := getRS(ctx, t, cs, ns, "web").Status
		return len(listPods(ctx, t, cs, ns, "app=web")) == 2 && s.Replicas == 1 && s.TerminatingReplicas != nil && *s.TerminatingReplicas == 1
	})
}

// addedCounter counts the pods created in a namespace, as an admin watch
// sees them.
type addedCounter struct {
	mu    sync.Mutex
	names map[string]bool
}

func countCreations(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) *addedCounter {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &addedCounter{names: map[string]bool{}}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				c.mu.Lock()
				c.names[p.Name] = true
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.Stop)
	return c
}

func (c *addedCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.names)
}

func TestReplicaSetPodCountNeverExceedsReplicas(t *testing.T) {
	cs, ctx := startServer(t)
	const ns = "rs-exact"
	createNamespace(ctx, t, cs, ns)
	created := countCreations(ctx, t, cs, ns)
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, newRS("web", 10, map[string]string{"app": "web"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "10 replicas", func() bool { return getRS(ctx, t, cs, ns, "web").Status.Replicas == 10 })
	if n := created.count(); n != 10 {
		t.Errorf("%d pods created for 10 replicas", n)
	}
}
