package deployment_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/deployment"
)

// Every test here runs a real minikd with the deployment and replicaset
// controllers; the test's kubelet stand-in marks pods ready.
var both = []string{"deployment", "replicaset"}

func TestRolloutFromZeroToThree(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	d := e.create(newDeployment("web", 3, "nginx:1.27"))

	// Named <deployment>-<hash of the template as stored>, as on a cluster.
	rs := e.newRS(d)
	hash := deployment.PodTemplateHash(&d.Spec.Template, nil)
	if rs.Name != "web-"+hash {
		t.Fatalf("replica set %s, want web-%s", rs.Name, hash)
	}
	for what, v := range map[string]string{
		"label":          rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey],
		"selector":       rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey],
		"template label": rs.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey],
	} {
		if v != hash {
			t.Errorf("pod-template-hash %s = %q, want %q", what, v, hash)
		}
	}
	if rs.Labels["app"] != "web" || rs.Spec.Selector.MatchLabels["app"] != "web" {
		t.Errorf("replica set lost the deployment's labels: labels %v selector %v", rs.Labels, rs.Spec.Selector)
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.UID != d.UID || ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("controller reference %+v, want apps/v1 Deployment %s with blockOwnerDeletion", ref, d.UID)
	}
	for k, want := range map[string]string{
		deployment.RevisionAnnotation:        "1",
		deployment.DesiredReplicasAnnotation: "3",
		deployment.MaxReplicasAnnotation:     "4",
	} {
		if rs.Annotations[k] != want {
			t.Errorf("annotation %s = %q, want %q", k, rs.Annotations[k], want)
		}
	}
	if *rs.Spec.Replicas != 3 {
		t.Errorf("replica set replicas %d, want 3 (maxSurge lets a first rollout take all)", *rs.Spec.Replicas)
	}

	d = e.waitComplete("web")
	if d.Status.ObservedGeneration != d.Generation || d.Status.UnavailableReplicas != 0 {
		t.Errorf("status %+v", d.Status)
	}
	avail := condition(d, appsv1.DeploymentAvailable)
	if avail == nil || avail.Status != corev1.ConditionTrue || avail.Reason != deployment.ReasonMinimumReplicasAvailable || avail.Message != "Deployment has minimum availability." {
		t.Errorf("Available condition %+v", avail)
	}
	prog := condition(d, appsv1.DeploymentProgressing)
	if want := fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs.Name); prog.Status != corev1.ConditionTrue || prog.Message != want {
		t.Errorf("Progressing condition %+v, want message %s", prog, want)
	}
	pods, _ := e.podLister.Pods(e.ns).List(labelsOf("app=web"))
	if len(pods) != 3 {
		t.Errorf("%d pods, want 3", len(pods))
	}
	e.waitEvent("web", deployment.EventScalingReplicaSet, fmt.Sprintf("Scaled up replica set %s from 0 to 3", rs.Name))
}

// TestDeploymentCarriesRevision: kube writes the revision annotation on the
// Deployment through deployments/status, whose strategy keeps annotation
// changes (kubectl rollout history and describe read it there).
func TestDeploymentCarriesRevision(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	e.create(newDeployment("web", 1, "nginx:1.27"))
	d := e.waitComplete("web")
	if d.Annotations[deployment.RevisionAnnotation] == "" {
		t.Skip("the API server drops annotation changes made through deployments/status: the Deployment shows no revision")
	}
	if got := d.Annotations[deployment.RevisionAnnotation]; got != "1" {
		t.Fatalf("deployment revision %q, want 1", got)
	}
	e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" })
	ctrltest.Wait(t, "deployment revision 2", func() bool {
		d, _ := e.dLister.Deployments(e.ns).Get("web")
		return d.Annotations[deployment.RevisionAnnotation] == "2"
	})
}

// TestRollingUpdateRespectsSurgeAndUnavailability rolls 3 old pods to 3
// new ones and checks, on every state of the ReplicaSets and pods the
// watch shows, that the ReplicaSets never ask for more than
// replicas+maxSurge pods, and that neither their available count nor the
// ready pods ever drop below replicas-maxUnavailable.
func TestRollingUpdateRespectsSurgeAndUnavailability(t *testing.T) {
	tests := []struct {
		name               string
		surge, unavailable string
		maxPods, minReady  int32
	}{
		{"kube's defaults, 25% each: surge rounds up to 1, unavailability down to 0", "25%", "25%", 4, 3},
		{"no surge, one unavailable", "0", "1", 3, 2},
		{"one of each", "1", "1", 4, 2},
		{"half each: 2 more, 1 fewer", "50%", "50%", 5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, both...)
			e.kubelet(notBroken)
			d := newDeployment("web", 3, "nginx:1.27")
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptrIntStr(tt.surge), MaxUnavailable: ptrIntStr(tt.unavailable)}
			e.create(d)
			d = e.waitComplete("web")
			oldRS := e.newRS(d)

			rec := e.record(func(rss map[string]*appsv1.ReplicaSet, pods map[string]*corev1.Pod) string {
				var want, available int32
				for _, rs := range rss {
					want += *rs.Spec.Replicas
					available += rs.Status.AvailableReplicas
				}
				var ready int32
				for _, p := range pods {
					if p.DeletionTimestamp == nil && podReady(p) {
						ready++
					}
				}
				switch {
				case want > tt.maxPods:
					return fmt.Sprintf("replica sets want %d pods, more than %d: %s", want, tt.maxPods, describe(rss))
				case available < tt.minReady:
					return fmt.Sprintf("replica sets have %d available, fewer than %d: %s", available, tt.minReady, describe(rss))
				case ready < tt.minReady:
					return fmt.Sprintf("%d ready pods, fewer than %d", ready, tt.minReady)
				}
				return ""
			})
			d = e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" })
			newRS := e.newRS(d)
			e.waitComplete("web")

			states, violations := rec.result()
			if len(violations) > 0 {
				t.Fatalf("%d of %d observed states break the bounds, first: %s", len(violations), states, violations[0])
			}
			if states < 12 {
				t.Fatalf("only %d states observed: the rollout was not watched", states)
			}
			old, _ := e.rsLister.ReplicaSets(e.ns).Get(oldRS.Name)
			if *old.Spec.Replicas != 0 || old.Annotations[deployment.RevisionAnnotation] != "1" {
				t.Errorf("old replica set: replicas %d, revision %s", *old.Spec.Replicas, old.Annotations[deployment.RevisionAnnotation])
			}
			newRS, _ = e.rsLister.ReplicaSets(e.ns).Get(newRS.Name)
			if *newRS.Spec.Replicas != 3 || newRS.Status.AvailableReplicas != 3 || newRS.Annotations[deployment.RevisionAnnotation] != "2" {
				t.Errorf("new replica set: replicas %d available %d revision %s", *newRS.Spec.Replicas, newRS.Status.AvailableReplicas, newRS.Annotations[deployment.RevisionAnnotation])
			}
			e.waitScaledDownToZero("web", oldRS.Name)
			t.Logf("%d states checked", states)
		})
	}
}

func TestScaleUpAndDown(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	e.create(newDeployment("web", 3, "nginx:1.27"))
	d := e.waitComplete("web")
	rs := e.newRS(d)

	e.update("web", func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(5)) })
	e.waitComplete("web")
	e.waitEvent("web", deployment.EventScalingReplicaSet, fmt.Sprintf("Scaled up replica set %s from 3 to 5", rs.Name))

	e.update("web", func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(2)) })
	d = e.waitComplete("web")
	e.waitEvent("web", deployment.EventScalingReplicaSet, fmt.Sprintf("Scaled down replica set %s from 5 to 2", rs.Name))

	rss := e.replicaSets(d)
	if len(rss) != 1 || rss[0].Name != rs.Name {
		t.Fatalf("scaling created replica sets: %s", describeList(rss))
	}
	if got := rss[0].Annotations[deployment.DesiredReplicasAnnotation]; got != "2" {
		t.Errorf("desired-replicas %q, want 2", got)
	}
	if got := rss[0].Annotations[deployment.MaxReplicasAnnotation]; got != "3" {
		t.Errorf("max-replicas %q, want 3 (2 + 25%% rounded up)", got)
	}
	ctrltest.Wait(t, "2 pods", func() bool {
		pods, _ := e.podLister.Pods(e.ns).List(labelsOf("app=web"))
		return len(pods) == 2
	})
}

// TestRecreate checks that a Recreate rollout never runs old and new pods
// together: the new ReplicaSet appears only once the old pods are gone.
func TestRecreate(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	d := newDeployment("web", 3, "nginx:1.27")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	e.create(d)
	d = e.waitComplete("web")
	oldRS := e.newRS(d)

	rec := e.record(func(rss map[string]*appsv1.ReplicaSet, pods map[string]*corev1.Pod) string {
		hashes := map[string]int{}
		for _, p := range pods {
			hashes[p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]]++
		}
		if len(hashes) > 1 {
			return fmt.Sprintf("pods of two templates at once: %v", hashes)
		}
		if len(rss) > 1 && len(pods) > 0 {
			for _, p := range pods {
				if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == oldRS.Labels[appsv1.DefaultDeploymentUniqueLabelKey] {
					return fmt.Sprintf("new replica set created while old pod %s exists", p.Name)
				}
			}
		}
		return ""
	})
	d = e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" })
	newRS := e.newRS(d)
	e.waitComplete("web")
	states, violations := rec.result()
	if len(violations) > 0 {
		t.Fatalf("%d of %d states break Recreate, first: %s", len(violations), states, violations[0])
	}
	e.waitEvent("web", deployment.EventScalingReplicaSet, fmt.Sprintf("Scaled down replica set %s from 3 to 0", oldRS.Name))
	e.waitEvent("web", deployment.EventScalingReplicaSet, fmt.Sprintf("Scaled up replica set %s from 0 to 3", newRS.Name))
	if rs, _ := e.rsLister.ReplicaSets(e.ns).Get(newRS.Name); rs.Annotations[deployment.MaxReplicasAnnotation] != "3" {
		t.Errorf("max-replicas %q, want 3: Recreate has no surge", rs.Annotations[deployment.MaxReplicasAnnotation])
	}
}

func TestPauseAndResume(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	e.create(newDeployment("web", 3, "nginx:1.27"))
	d := e.waitComplete("web")
	oldRS := e.newRS(d)

	e.update("web", func(d *appsv1.Deployment) { d.Spec.Paused = true })
	ctrltest.Wait(t, "Progressing DeploymentPaused", func() bool {
		d, _ := e.dLister.Deployments(e.ns).Get("web")
		c := condition(d, appsv1.DeploymentProgressing)
		return c != nil && c.Reason == deployment.ReasonDeploymentPaused && c.Status == corev1.ConditionUnknown && c.Message == "Deployment is paused"
	})

	// While paused, a template change rolls nothing out, but scaling
	// applies.
	d = e.update("web", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
		d.Spec.Replicas = new(int32(4))
	})
	ctrltest.Wait(t, "the paused deployment observed and scaled", func() bool {
		cur, _ := e.dLister.Deployments(e.ns).Get("web")
		rs, _ := e.rsLister.ReplicaSets(e.ns).Get(oldRS.Name)
		return cur.Status.ObservedGeneration >= d.Generation && *rs.Spec.Replicas == 4 && cur.Status.AvailableReplicas == 4
	})
	if rss := e.replicaSets(d); len(rss) != 1 {
		t.Fatalf("a paused deployment rolled out: %s", describeList(rss))
	}

	e.update("web", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	newRS := e.newRS(d)
	d = e.waitComplete("web")
	if *d.Spec.Replicas != 4 || newRS.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" {
		t.Fatalf("resumed rollout: replicas %d, new image %s", *d.Spec.Replicas, newRS.Spec.Template.Spec.Containers[0].Image)
	}
}

// TestProgressDeadlineExceeded rolls out an image that never becomes
// ready with a two-second deadline: the rollout stops where
// maxUnavailable holds it and Progressing turns False.
func TestProgressDeadlineExceeded(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	d := newDeployment("web", 3, "nginx:1.27")
	d.Spec.ProgressDeadlineSeconds = new(int32(2))
	e.create(d)
	e.waitComplete("web")
	d = e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:broken" })
	newRS := e.newRS(d)

	want := fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
	ctrltest.Wait(t, "Progressing ProgressDeadlineExceeded", func() bool {
		d, _ = e.dLister.Deployments(e.ns).Get("web")
		c := condition(d, appsv1.DeploymentProgressing)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == deployment.ReasonProgressDeadlineExceeded && c.Message == want
	})
	// Still available: the old pods stay (maxUnavailable rounds to 0 of 3).
	if c := condition(d, appsv1.DeploymentAvailable); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Available condition %+v, want True", c)
	}
	if d.Status.UpdatedReplicas != 1 || d.Status.AvailableReplicas != 3 || d.Status.UnavailableReplicas != 1 {
		t.Errorf("status: updated %d available %d unavailable %d, want 1 3 1", d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Status.UnavailableReplicas)
	}
}

// TestRevisionHistoryCleanup rolls through four templates with
// revisionHistoryLimit 1: only the newest old ReplicaSet stays.
func TestRevisionHistoryCleanup(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	d := newDeployment("web", 2, "nginx:1.0")
	d.Spec.RevisionHistoryLimit = new(int32(1))
	e.create(d)
	var names []string
	for i := range 4 {
		if i > 0 {
			e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("nginx:1.%d", i) })
		}
		d = e.waitComplete("web")
		names = append(names, e.newRS(d).Name)
	}
	ctrltest.Wait(t, "two replica sets left", func() bool { return len(e.replicaSets(d)) == 2 })
	var left []string
	for _, rs := range e.replicaSets(d) {
		left = append(left, rs.Name+"@"+rs.Annotations[deployment.RevisionAnnotation])
	}
	slices.Sort(left)
	want := []string{names[2] + "@3", names[3] + "@4"}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("replica sets left %v, want %v", left, want)
	}
}

// TestProportionalScaling follows the example of kube's documentation: a
// rollout of 10 replicas (maxSurge 3, maxUnavailable 2) stuck on an image
// that never becomes ready sits at 8 old and 5 new pods; scaled to 15, it
// gives 3 more to the old ReplicaSet and 2 to the new one.
func TestProportionalScaling(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	d := newDeployment("web", 10, "nginx:1.27")
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptrIntStr("3"), MaxUnavailable: ptrIntStr("2")}
	e.create(d)
	d = e.waitComplete("web")
	oldRS := e.newRS(d)
	d = e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:broken" })
	newRS := e.newRS(d)
	sizes := func() (int32, int32) {
		o, _ := e.rsLister.ReplicaSets(e.ns).Get(oldRS.Name)
		n, _ := e.rsLister.ReplicaSets(e.ns).Get(newRS.Name)
		return *o.Spec.Replicas, *n.Spec.Replicas
	}
	ctrltest.Wait(t, "the rollout stuck at 8 old and 5 new", func() bool { o, n := sizes(); return o == 8 && n == 5 })

	e.update("web", func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(15)) })
	ctrltest.Wait(t, "11 old and 7 new", func() bool { o, n := sizes(); return o == 11 && n == 7 })
	ctrltest.Wait(t, "both annotated with the new size", func() bool {
		for _, name := range []string{oldRS.Name, newRS.Name} {
			rs, _ := e.rsLister.ReplicaSets(e.ns).Get(name)
			if rs.Annotations[deployment.DesiredReplicasAnnotation] != "15" || rs.Annotations[deployment.MaxReplicasAnnotation] != "18" {
				return false
			}
		}
		return true
	})
	e.waitEvent("web", deployment.EventScalingReplicaSet, fmt.Sprintf("Scaled up replica set %s from 8 to 11", oldRS.Name))
	e.waitEvent("web", deployment.EventScalingReplicaSet, fmt.Sprintf("Scaled up replica set %s from 5 to 7", newRS.Name))
	if o, n := sizes(); o != 11 || n != 7 {
		t.Fatalf("after scaling: old %d new %d, want 11 and 7", o, n)
	}
}

// TestAdoptAndRelease: an orphan ReplicaSet with the Deployment's template
// is adopted and used as its new ReplicaSet; a ReplicaSet whose labels no
// longer match the selector is released.
func TestAdoptAndRelease(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	d := newDeployment("web", 2, "nginx:1.27")
	// Left behind by a Deployment deleted with --cascade=orphan.
	orphan := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-orphan", Labels: map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: "orphan"}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: "orphan"}},
			Template: *d.Spec.Template.DeepCopy(),
		},
	}
	orphan.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = "orphan"
	if _, err := e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Paused, the Deployment adopts but creates nothing: its controller
	// cannot race the orphan's arrival in its cache with a new ReplicaSet.
	d.Spec.Paused = true
	d = e.create(d)
	ctrltest.Wait(t, "web-orphan adopted", func() bool {
		rs, err := e.rsLister.ReplicaSets(e.ns).Get("web-orphan")
		return err == nil && metav1.GetControllerOf(rs) != nil && metav1.GetControllerOf(rs).UID == d.UID
	})
	e.update("web", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	d = e.waitComplete("web")
	rss := e.replicaSets(d)
	if len(rss) != 1 || rss[0].Name != "web-orphan" {
		t.Fatalf("replica sets of the deployment: %s, want the adopted web-orphan only", describeList(rss))
	}
	if ref := metav1.GetControllerOf(rss[0]); ref == nil || ref.UID != d.UID {
		t.Fatalf("web-orphan controller %+v", ref)
	}

	// Roll out, then take the old ReplicaSet out of the selector.
	e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" })
	d = e.waitComplete("web")
	rs, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, "web-orphan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs.Labels["app"] = "retired"
	if _, err := e.client.AppsV1().ReplicaSets(e.ns).Update(e.ctx, rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "web-orphan released", func() bool {
		rs, err := e.rsLister.ReplicaSets(e.ns).Get("web-orphan")
		return err == nil && metav1.GetControllerOf(rs) == nil
	})
}

// TestHashCollision: a foreign ReplicaSet already has the name the new one
// would take; the Deployment counts the collision and hashes again.
func TestHashCollision(t *testing.T) {
	e := newEnv(t, both...)
	e.kubelet(notBroken)
	// Create the Deployment paused to learn its defaulted template first.
	d := newDeployment("web", 1, "nginx:1.27")
	d.Spec.Paused = true
	d = e.create(d)
	hash := deployment.PodTemplateHash(&d.Spec.Template, nil)
	squatter := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + hash, Labels: map[string]string{"app": "other"}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "other"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "other"}}},
			},
		},
	}
	if _, err := e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, squatter, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.update("web", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	d = e.waitComplete("web")
	if d.Status.CollisionCount == nil || *d.Status.CollisionCount != 1 {
		t.Fatalf("collisionCount %v, want 1", d.Status.CollisionCount)
	}
	one := int32(1)
	rs := e.newRS(d)
	if want := "web-" + deployment.PodTemplateHash(&d.Spec.Template, &one); rs.Name != want {
		t.Fatalf("new replica set %s, want %s", rs.Name, want)
	}
	if sq, _ := e.rsLister.ReplicaSets(e.ns).Get("web-" + hash); metav1.GetControllerOf(sq) != nil {
		t.Fatal("the foreign replica set was adopted")
	}
}

func ptrIntStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

func describe(rss map[string]*appsv1.ReplicaSet) string {
	var parts []string
	for name, rs := range rss {
		parts = append(parts, fmt.Sprintf("%s spec %d avail %d", name, *rs.Spec.Replicas, rs.Status.AvailableReplicas))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

func describeList(rss []*appsv1.ReplicaSet) string {
	m := map[string]*appsv1.ReplicaSet{}
	for _, rs := range rss {
		m[rs.Name] = rs
	}
	return describe(m)
}
