package statefulset_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/persistentvolume"
	"minik/internal/controllers/statefulset"
	"minik/internal/testserver"
)

func start(t *testing.T, ns string) (kubernetes.Interface, context.Context) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{statefulset.Name, persistentvolume.Name}, Scheduler: true, Nodes: 2})
	cs, ctx := srv.Client(t), t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cs, ctx
}

func newSet(name string, replicas int32, image string) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "nginx", Image: image,
					VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "www"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

func pods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, app string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

func getSet(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) *appsv1.StatefulSet {
	t.Helper()
	s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// events returns the messages of the controller's events about name, of
// reason, oldest first.
func events(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, reason string) []string {
	t.Helper()
	l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var evs []corev1.Event
	for _, e := range l.Items {
		if e.Reason == reason && e.Source.Component == statefulset.Component {
			evs = append(evs, e)
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].FirstTimestamp.Before(&evs[j].FirstTimestamp) })
	var out []string
	for _, e := range evs {
		out = append(out, e.Message)
	}
	return out
}

// waitEvents waits for n events of reason about name (events are
// recorded asynchronously) and returns their messages.
func waitEvents(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, reason string, n int) []string {
	t.Helper()
	var got []string
	ctrltest.Wait(t, fmt.Sprintf("%d %s events", n, reason), func() bool {
		got = events(ctx, t, cs, ns, name, reason)
		return len(got) >= n
	})
	return got
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitRolledOut waits until the StatefulSet reports every replica ready
// and updated for its current generation.
func waitRolledOut(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32) *appsv1.StatefulSet {
	t.Helper()
	var s *appsv1.StatefulSet
	ctrltest.Wait(t, fmt.Sprintf("statefulset %s with %d ready updated replicas", name, replicas), func() bool {
		s = getSet(ctx, t, cs, ns, name)
		st := s.Status
		return st.ObservedGeneration == s.Generation && st.Replicas == replicas && st.ReadyReplicas == replicas &&
			st.UpdatedReplicas == replicas && st.CurrentRevision == st.UpdateRevision
	})
	return s
}

func TestStatefulSetLifecycle(t *testing.T) {
	const ns = "sts"
	cs, ctx := start(t, ns)
	set, err := cs.AppsV1().StatefulSets(ns).Create(ctx, newSet("web", 3, "nginx:1.27"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set = waitRolledOut(ctx, t, cs, ns, "web", 3)

	t.Run("pods come up in ordinal order with stable identities", func(t *testing.T) {
		got := waitEvents(ctx, t, cs, ns, "web", statefulset.ReasonSuccessfulCreate, 6)
		want := []string{
			"create Claim www-web-0 Pod web-0 in StatefulSet web success",
			"create Pod web-0 in StatefulSet web successful",
			"create Claim www-web-1 Pod web-1 in StatefulSet web success",
			"create Pod web-1 in StatefulSet web successful",
			"create Claim www-web-2 Pod web-2 in StatefulSet web success",
			"create Pod web-2 in StatefulSet web successful",
		}
		if !slices.Equal(got, want) {
			t.Errorf("creation events = %q, want %q", got, want)
		}
		ps := pods(ctx, t, cs, ns, "web")
		if len(ps) != 3 {
			t.Fatalf("%d pods, want 3", len(ps))
		}
		for i, p := range ps {
			name := fmt.Sprintf("web-%d", i)
			if p.Name != name || p.Spec.Hostname != name || p.Spec.Subdomain != "web" {
				t.Errorf("pod %s: hostname %q subdomain %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
			}
			if p.Labels[appsv1.StatefulSetPodNameLabel] != name || p.Labels[appsv1.PodIndexLabel] != fmt.Sprint(i) ||
				p.Labels[appsv1.ControllerRevisionHashLabelKey] != set.Status.UpdateRevision {
				t.Errorf("pod %s labels = %v", p.Name, p.Labels)
			}
			if i > 0 {
				// Each pod is created only once the one before is ready.
				prev := ps[i-1]
				var readyAt metav1.Time
				for _, c := range prev.Status.Conditions {
					if c.Type == corev1.PodReady {
						readyAt = c.LastTransitionTime
					}
				}
				if p.CreationTimestamp.Before(&readyAt) {
					t.Errorf("pod %s created at %v, before %s was ready at %v", p.Name, p.CreationTimestamp, prev.Name, readyAt)
				}
			}
		}
		revs, err := cs.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(revs.Items) != 1 || revs.Items[0].Name != set.Status.CurrentRevision || revs.Items[0].Revision != 1 {
			t.Errorf("revisions = %+v, want one, %s, revision 1", revs.Items, set.Status.CurrentRevision)
		}
	})

	t.Run("each pod has its own bound claim from the template", func(t *testing.T) {
		for i, p := range pods(ctx, t, cs, ns, "web") {
			claim := fmt.Sprintf("www-web-%d", i)
			var mounted string
			for _, v := range p.Spec.Volumes {
				if v.Name == "www" && v.PersistentVolumeClaim != nil {
					mounted = v.PersistentVolumeClaim.ClaimName
				}
			}
			if mounted != claim {
				t.Errorf("pod %s mounts claim %q as www, want %q", p.Name, mounted, claim)
			}
			pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pvc.Status.Phase != corev1.ClaimBound || pvc.Labels["app"] != "web" {
				t.Errorf("claim %s: phase %s, labels %v; want Bound with the set's selector labels", claim, pvc.Status.Phase, pvc.Labels)
			}
		}
	})
	t.Run("an image update rolls the pods in reverse ordinal order", func(t *testing.T) {
		old := set.Status.CurrentRevision
		patch := `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}`
		if _, err := cs.AppsV1().StatefulSets(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		set = waitRolledOut(ctx, t, cs, ns, "web", 3)
		if set.Status.UpdateRevision == old {
			t.Fatalf("update revision still %s", old)
		}
		got := waitEvents(ctx, t, cs, ns, "web", statefulset.ReasonSuccessfulDelete, 3)
		want := []string{
			"delete Pod web-2 in StatefulSet web successful",
			"delete Pod web-1 in StatefulSet web successful",
			"delete Pod web-0 in StatefulSet web successful",
		}
		if !slices.Equal(got, want) {
			t.Errorf("deletion events = %q, want %q", got, want)
		}
		for _, p := range pods(ctx, t, cs, ns, "web") {
			if p.Spec.Containers[0].Image != "nginx:1.28" || p.Labels[appsv1.ControllerRevisionHashLabelKey] != set.Status.UpdateRevision {
				t.Errorf("pod %s: image %s revision %s", p.Name, p.Spec.Containers[0].Image, p.Labels[appsv1.ControllerRevisionHashLabelKey])
			}
		}
		revs, err := cs.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		numbers := map[string]int64{}
		for _, r := range revs.Items {
			numbers[r.Name] = r.Revision
		}
		if numbers[old] != 1 || numbers[set.Status.UpdateRevision] != 2 {
			t.Errorf("revisions = %v, want %s=1 and %s=2", numbers, old, set.Status.UpdateRevision)
		}
	})

	t.Run("a partition keeps the lower ordinals at the current revision", func(t *testing.T) {
		patch := `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}},"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.29"}]}}}}`
		if _, err := cs.AppsV1().StatefulSets(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "web-2 updated and ready", func() bool {
			s := getSet(ctx, t, cs, ns, "web")
			return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 1 && s.Status.ReadyReplicas == 3
		})
		s := getSet(ctx, t, cs, ns, "web")
		if s.Status.CurrentRevision == s.Status.UpdateRevision || s.Status.CurrentReplicas != 2 {
			t.Errorf("status = %+v, want 2 current replicas at another revision than the update's", s.Status)
		}
		for _, p := range pods(ctx, t, cs, ns, "web") {
			want := "nginx:1.28"
			if p.Name == "web-2" {
				want = "nginx:1.29"
			}
			if p.Spec.Containers[0].Image != want {
				t.Errorf("pod %s runs %s, want %s", p.Name, p.Spec.Containers[0].Image, want)
			}
		}
	})

	t.Run("scaling down removes the highest ordinal", func(t *testing.T) {
		if _, err := cs.AppsV1().StatefulSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "pods web-0 and web-1 only", func() bool {
			var names []string
			for _, p := range pods(ctx, t, cs, ns, "web") {
				names = append(names, p.Name)
			}
			return slices.Equal(names, []string{"web-0", "web-1"})
		})
		ctrltest.Wait(t, "status of 2 replicas", func() bool {
			s := getSet(ctx, t, cs, ns, "web")
			return s.Status.Replicas == 2 && s.Status.ReadyReplicas == 2
		})
		for _, p := range pods(ctx, t, cs, ns, "web") {
			if !ready(&p) {
				t.Errorf("pod %s not ready", p.Name)
			}
		}
	})
}

func TestParallelStatefulSetCreatesAllPodsAtOnce(t *testing.T) {
	const ns = "sts-parallel"
	cs, ctx := start(t, ns)
	set := newSet("cache", 3, "redis:7")
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(ctx, t, cs, ns, "cache", 3)
	waitEvents(ctx, t, cs, ns, "cache", statefulset.ReasonSuccessfulCreate, 3)
}

// TestStatefulSetClaimsOnlyItsOrdinals: as kube's StatefulSet controller,
// a pod the set controls must also be named as one of its ordinals: one
// that is not (here made by hand with the set's controller reference) is
// released, not counted, and left running.
func TestStatefulSetClaimsOnlyItsOrdinals(t *testing.T) {
	const ns = "sts-claim"
	cs, ctx := start(t, ns)
	set, err := cs.AppsV1().StatefulSets(ns).Create(ctx, newSet("db", 1, "redis:7"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitRolledOut(ctx, t, cs, ns, "db", 1)
	stray := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "db-extra", Labels: map[string]string{"app": "db"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis:7"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "db-extra released", func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "db-extra", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("db-extra: %v", err)
		}
		return len(p.OwnerReferences) == 0
	})
	if s := waitRolledOut(ctx, t, cs, ns, "db", 1); s.Status.Replicas != 1 {
		t.Errorf("status.replicas = %d, want 1", s.Status.Replicas)
	}
}
