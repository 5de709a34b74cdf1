package daemonset

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"minik/internal/controllers/history"
)

// revisions makes the revision of ds's template the latest (creating it,
// or renumbering an equal older one), deletes the oldest unused revisions
// beyond revisionHistoryLimit, and returns the current revision and its
// hash, which the pods of the template carry.
func (c *Controller) revisions(ctx context.Context, ds *appsv1.DaemonSet, byNode map[string][]*corev1.Pod, collisionCount *int32) (*appsv1.ControllerRevision, string, error) {
	all, err := c.revisionLister.ControllerRevisions(ds.Namespace).List(labels.Everything())
	if err != nil {
		return nil, "", fmt.Errorf("list controllerrevisions of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	var revs []*appsv1.ControllerRevision
	for _, r := range all {
		if metav1.IsControlledBy(r, ds) {
			revs = append(revs, r)
		}
	}
	history.Sort(revs)
	want, err := history.New(ds, controllerKind.Kind, &ds.Spec.Template, history.Next(revs))
	if err != nil {
		return nil, "", err
	}
	var cur *appsv1.ControllerRevision
	for _, r := range revs {
		if history.Equal(r, want) {
			cur = r
		}
	}
	switch {
	case cur == nil:
		cur, err = history.Create(ctx, c.client, ds.Name, appsv1.DefaultDaemonSetUniqueLabelKey, want, collisionCount)
		if err != nil {
			return nil, "", err
		}
		revs = append(revs, cur)
	case cur.Name != revs[len(revs)-1].Name:
		if cur, err = history.Bump(ctx, c.client, cur, want.Revision); err != nil {
			return nil, "", err
		}
	}
	hash := cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	if hash == "" {
		hash = history.Hash(cur.Data.Raw, collisionCount)
	}
	keep := map[string]bool{cur.Name: true}
	inUse := map[string]bool{}
	for _, pods := range byNode {
		for _, p := range pods {
			inUse[p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] = true
		}
	}
	for _, r := range revs {
		if inUse[r.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] {
			keep[r.Name] = true
		}
	}
	limit := 10
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	if err := history.Truncate(ctx, c.client, revs, keep, limit); err != nil {
		return nil, "", err
	}
	return cur, hash, nil
}

// manage creates the daemon pods of the nodes that should run one and have
// none, and deletes the pods of nodes that should not keep running one,
// failed pods (replaced on the next sync) and extra pods on a node.
func (c *Controller) manage(ctx context.Context, key string, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string) error {
	var create []string
	var remove []*corev1.Pod
	known := map[string]bool{}
	for _, node := range nodes {
		known[node.Name] = true
		run, keep := shouldRun(ds, node)
		pods := byNode[node.Name]
		switch {
		case run && len(pods) == 0:
			if !c.creationPending(key, node.Name) {
				create = append(create, node.Name)
			}
		case keep:
			var alive []*corev1.Pod
			for _, p := range pods {
				switch {
				case p.DeletionTimestamp != nil:
				case p.Status.Phase == corev1.PodFailed:
					c.recorder.Eventf(ds, corev1.EventTypeWarning, ReasonFailedDaemonPod, "Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name)
					remove = append(remove, p)
				default:
					alive = append(alive, p)
				}
			}
			if len(alive) > 1 {
				// Keep the oldest; a surge pod of a rollout is not modelled.
				sort.Slice(alive, func(i, j int) bool { return alive[i].CreationTimestamp.Before(&alive[j].CreationTimestamp) })
				remove = append(remove, alive[1:]...)
			}
		case !keep:
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					remove = append(remove, p)
				}
			}
		}
	}
	// Pods of nodes that are gone.
	for name, pods := range byNode {
		if known[name] {
			continue
		}
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				remove = append(remove, p)
			}
		}
	}
	var firstErr error
	for _, node := range create {
		if err := c.createPod(ctx, key, ds, node, hash); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, p := range remove {
		if err := c.deletePod(ctx, ds, p); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

func (c *Controller) createPod(ctx context.Context, key string, ds *appsv1.DaemonSet, node, hash string) error {
	c.expectCreation(key, node)
	created, err := c.client.CoreV1().Pods(ds.Namespace).Create(ctx, newPod(ds, node, hash), metav1.CreateOptions{})
	if err != nil {
		c.creationObserved(key, node)
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		c.recorder.Eventf(ds, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		return fmt.Errorf("create pod of daemonset %s/%s on node %s: %w", ds.Namespace, ds.Name, node, err)
	}
	c.recorder.Eventf(ds, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %v", created.Name)
	return nil
}

func (c *Controller) deletePod(ctx context.Context, ds *appsv1.DaemonSet, p *corev1.Pod) error {
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		c.recorder.Eventf(ds, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	c.recorder.Eventf(ds, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %v", p.Name)
	return nil
}

// rollingUpdate deletes pods of older templates (the next sync creates
// their replacements): every one that is unavailable anyway, and
// available ones while fewer than maxUnavailable desired nodes lack an
// available pod, as kube's rollingUpdate with maxSurge 0.
func (c *Controller) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string) error {
	now := c.clock.Now()
	desired := 0
	for _, n := range nodes {
		if run, _ := shouldRun(ds, n); run {
			desired++
		}
	}
	maxUnavailable := 1
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, desired, true)
		if err != nil {
			return fmt.Errorf("daemonset %s/%s: invalid maxUnavailable: %w", ds.Namespace, ds.Name, err)
		}
		maxUnavailable = v
	}
	if maxUnavailable == 0 {
		maxUnavailable = 1
	}
	unavailable := 0
	var replace, candidates []*corev1.Pod
	for _, n := range nodes {
		if run, _ := shouldRun(ds, n); !run {
			continue
		}
		var newPod, oldPod *corev1.Pod
		for _, p := range byNode[n.Name] {
			if p.DeletionTimestamp != nil {
				continue
			}
			if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
				newPod = p
			} else {
				oldPod = p
			}
		}
		switch {
		case newPod == nil && oldPod == nil:
			unavailable++
		case newPod != nil:
			if !podutils.IsPodAvailable(newPod, ds.Spec.MinReadySeconds, metav1.NewTime(now)) {
				unavailable++
			}
		default:
			if !podutils.IsPodAvailable(oldPod, ds.Spec.MinReadySeconds, metav1.NewTime(now)) {
				replace = append(replace, oldPod)
				unavailable++
			} else {
				candidates = append(candidates, oldPod)
			}
		}
	}
	budget := max(0, min(maxUnavailable-unavailable, len(candidates)))
	for _, p := range append(replace, candidates[:budget]...) {
		if err := c.deletePod(ctx, ds, p); err != nil {
			return err
		}
	}
	return nil
}

// status counts, over the nodes, those that should run the daemon and
// those that do (with the oldest pod of each node telling readiness and
// whether it is of the current template), as kube's updateDaemonSetStatus.
func (c *Controller) status(ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string, collisionCount int32) appsv1.DaemonSetStatus {
	now := c.clock.Now()
	st := appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, CollisionCount: &collisionCount, Conditions: ds.Status.Conditions}
	for _, n := range nodes {
		run, _ := shouldRun(ds, n)
		pods := byNode[n.Name]
		if !run {
			if len(pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		st.CurrentNumberScheduled++
		sorted := append([]*corev1.Pod(nil), pods...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].CreationTimestamp.Before(&sorted[j].CreationTimestamp) })
		p := sorted[0]
		if podutils.IsPodReady(p) {
			st.NumberReady++
			if podutils.IsPodAvailable(p, ds.Spec.MinReadySeconds, metav1.NewTime(now)) {
				st.NumberAvailable++
			}
		}
		for _, q := range pods {
			if q.DeletionTimestamp == nil && q.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
				st.UpdatedNumberScheduled++
				break
			}
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	return st
}
