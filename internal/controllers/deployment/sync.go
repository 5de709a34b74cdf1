package deployment

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncStatusOnly only writes the status (a Deployment being deleted).
func (c *Controller) syncStatusOnly(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	return c.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// sync handles scaling events and paused Deployments: it resizes the
// ReplicaSets (proportionally mid-rollout) without rolling anything out.
func (c *Controller) sync(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, oldRSs); err != nil {
		// Requeued: this sync stops here.
		return err
	}
	if d.Spec.Paused {
		if err := c.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return c.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// checkPausedConditions records pausing and resuming in the Progressing
// condition (status Unknown), unless the Deployment already timed out.
func (c *Controller) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := getCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == ReasonProgressDeadlineExceeded {
		return nil
	}
	pausedCondExists := cond != nil && cond.Reason == ReasonDeploymentPaused
	now := c.clock.Now()
	switch {
	case d.Spec.Paused && !pausedCondExists:
		setCondition(&d.Status, newCondition(now, appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonDeploymentPaused, "Deployment is paused"))
	case !d.Spec.Paused && pausedCondExists:
		setCondition(&d.Status, newCondition(now, appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonDeploymentResumed, "Deployment is resumed"))
	default:
		return nil
	}
	return c.updateStatus(ctx, d)
}

// updateStatus writes d's status and keeps d's resourceVersion current, so
// that a later write in the same sync does not conflict with this one.
func (c *Controller) updateStatus(ctx context.Context, d *appsv1.Deployment) error {
	out, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	d.ResourceVersion = out.ResourceVersion
	return nil
}

// getAllReplicaSetsAndSyncRevision returns the new ReplicaSet (nil if
// there is none and createIfNotExisted is false) and all the old ones,
// with the new one's revision raised above the old ones' and copied to
// the Deployment.
func (c *Controller) getAllReplicaSetsAndSyncRevision(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, createIfNotExisted bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	newRS, oldRSs, _, err := c.getAllReplicaSets(ctx, d, rsList, createIfNotExisted, false)
	return newRS, oldRSs, err
}

// getAllReplicaSets is getAllReplicaSetsAndSyncRevision that, when
// deferStatus, leaves the revision and Progressing condition it sets on d
// for the caller to write with the rest of the sync's status (one write
// instead of two); pending reports that d has such unwritten changes.
func (c *Controller) getAllReplicaSets(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, createIfNotExisted, deferStatus bool) (newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, pending bool, err error) {
	_, allOldRSs := findOldReplicaSets(d, rsList)
	newRS, pending, err = c.getNewReplicaSet(ctx, d, rsList, allOldRSs, createIfNotExisted, deferStatus)
	if err != nil {
		return nil, nil, false, err
	}
	return newRS, allOldRSs, pending, nil
}

// getNewReplicaSet returns the ReplicaSet of d's current template, after
// bringing its annotations and minReadySeconds up to date, or creates it
// (named <deployment>-<pod-template-hash>, sized as the strategy allows)
// when createIfNotExisted. A name taken by a ReplicaSet with another
// template is a hash collision: status.collisionCount goes up and the
// sync is retried with a new hash. With deferStatus, the changes it makes
// to d's revision annotation and status are left unwritten and reported
// by pending.
func (c *Controller) getNewReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList, oldRSs []*appsv1.ReplicaSet, createIfNotExisted, deferStatus bool) (rs *appsv1.ReplicaSet, pending bool, err error) {
	existing := findNewReplicaSet(d, rsList)
	newRevision := strconv.FormatInt(maxRevision(oldRSs)+1, 10)

	if existing != nil {
		rsCopy := existing.DeepCopy()
		annotationsUpdated := setNewReplicaSetAnnotations(d, rsCopy, newRevision, true)
		if annotationsUpdated || rsCopy.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rsCopy.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			out, err := c.client.AppsV1().ReplicaSets(rsCopy.Namespace).Update(ctx, rsCopy, metav1.UpdateOptions{})
			if err != nil {
				return nil, false, fmt.Errorf("update replica set %s/%s: %w", rsCopy.Namespace, rsCopy.Name, err)
			}
			return out, false, nil
		}
		// The revision the ReplicaSet carries is the one it was given.
		needsUpdate := setDeploymentRevision(d, rsCopy.Annotations[RevisionAnnotation])
		// A Deployment that never had a Progressing condition starts its
		// progress estimate now.
		if hasProgressDeadline(d) && getCondition(d.Status, appsv1.DeploymentProgressing) == nil {
			msg := fmt.Sprintf("Found new replica set %q", rsCopy.Name)
			setCondition(&d.Status, newCondition(c.clock.Now(), appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonFoundNewReplicaSet, msg))
			needsUpdate = true
		}
		if needsUpdate && !deferStatus {
			if err := c.updateStatus(ctx, d); err != nil {
				return nil, false, err
			}
			needsUpdate = false
		}
		return rsCopy, needsUpdate, nil
	}

	if !createIfNotExisted {
		return nil, false, nil
	}

	template := *d.Spec.Template.DeepCopy()
	hash := PodTemplateHash(&template, d.Status.CollisionCount)
	template.Labels = withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	rsLabels := withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	newRS := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			// Deterministic, so that a repeated create finds the first one.
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, controllerKind)},
			Labels:          rsLabels,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        new(int32),
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        selectorWithLabel(d.Spec.Selector, appsv1.DefaultDeploymentUniqueLabelKey, hash),
			Template:        template,
		},
	}
	count, err := newRSNewReplicas(d, append(oldRSs[:len(oldRSs):len(oldRSs)], newRS), newRS)
	if err != nil {
		return nil, false, err
	}
	*newRS.Spec.Replicas = count
	setNewReplicaSetAnnotations(d, newRS, newRevision, false)

	alreadyExists := false
	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, newRS, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		// A slow cache, or a hash collision.
		alreadyExists = true
		rs, getErr := c.rsLister.ReplicaSets(newRS.Namespace).Get(newRS.Name)
		if getErr != nil {
			return nil, false, fmt.Errorf("get replica set %s/%s: %w", newRS.Namespace, newRS.Name, getErr)
		}
		// Ours, with our template: it is the new ReplicaSet.
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &rs.Spec.Template) {
			created, err = rs, nil
			break
		}
		// Someone else's, or another template under the same hash: count
		// the collision so that the next sync hashes differently.
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		before := *d.Status.CollisionCount
		*d.Status.CollisionCount++
		if uerr := c.updateStatus(ctx, d); uerr == nil {
			c.logger.Info("hash collision for deployment, bumping collisionCount",
				"deployment", d.Namespace+"/"+d.Name, "oldCollisionCount", before, "newCollisionCount", *d.Status.CollisionCount)
		}
		return nil, false, fmt.Errorf("create replica set %s/%s: %w", newRS.Namespace, newRS.Name, err)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// Every create will fail from now on: nothing to report.
		return nil, false, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", newRS.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(c.clock.Now(), appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonReplicaSetCreateError, msg))
			// The creation error is the one to report; this write is best effort.
			_ = c.updateStatus(ctx, d)
		}
		c.recorder.Event(d, corev1.EventTypeWarning, ReasonReplicaSetCreateError, msg)
		return nil, false, fmt.Errorf("create replica set %s/%s: %w", newRS.Namespace, newRS.Name, err)
	}
	if !alreadyExists && count > 0 {
		c.recorder.Eventf(d, corev1.EventTypeNormal, EventScalingReplicaSet, "Scaled up replica set %s from 0 to %d", created.Name, count)
	}

	needsUpdate := setDeploymentRevision(d, newRevision)
	if !alreadyExists && hasProgressDeadline(d) {
		msg := fmt.Sprintf("Created new replica set %q", created.Name)
		setCondition(&d.Status, newCondition(c.clock.Now(), appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetCreated, msg))
		needsUpdate = true
	}
	if needsUpdate && !deferStatus {
		if err := c.updateStatus(ctx, d); err != nil {
			return created, false, err
		}
		needsUpdate = false
	}
	return created, needsUpdate, nil
}

// scale resizes the ReplicaSets to d's replicas without rolling out: the
// only active (or newest) one takes them all; a saturated new one leaves
// the old ones none; otherwise, in a rolling update, the difference is
// spread over the active ones in proportion to their size, so that a
// resize never hurries or delays the rollout.
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	if only := findActiveOrLatest(newRS, oldRSs); only != nil {
		if replicas(only.Spec.Replicas) == replicas(d.Spec.Replicas) {
			return nil
		}
		_, _, err := c.scaleReplicaSetAndRecordEvent(ctx, only, replicas(d.Spec.Replicas), d)
		return err
	}

	if isSaturated(d, newRS) {
		for _, old := range filterActive(oldRSs) {
			if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, old, 0, d); err != nil {
				return err
			}
		}
		return nil
	}

	if !isRollingUpdate(d) {
		return nil
	}
	allRSs := filterActive(append(oldRSs[:len(oldRSs):len(oldRSs)], newRS))
	allRSsReplicas := sumReplicas(allRSs)
	var allowedSize int32
	if replicas(d.Spec.Replicas) > 0 {
		allowedSize = replicas(d.Spec.Replicas) + maxSurge(d)
	}
	// Replicas to add (or, negative, remove) across the active ReplicaSets.
	toAdd := allowedSize - allRSsReplicas
	// Among equals, scaling up favours newer ReplicaSets and scaling down
	// takes from older ones.
	switch {
	case toAdd > 0:
		sort.Sort(bySizeNewer(allRSs))
	case toAdd < 0:
		sort.Sort(bySizeOlder(allRSs))
	}
	var added int32
	sizes := make(map[string]int32, len(allRSs))
	for _, rs := range allRSs {
		if toAdd != 0 {
			p := proportion(rs, d, toAdd, added)
			sizes[rs.Name] = replicas(rs.Spec.Replicas) + p
			added += p
		} else {
			sizes[rs.Name] = replicas(rs.Spec.Replicas)
		}
	}
	for i, rs := range allRSs {
		// Leftovers go to (or come from) the largest.
		if i == 0 && toAdd != 0 {
			sizes[rs.Name] = max(sizes[rs.Name]+toAdd-added, 0)
		}
		// Even at an unchanged size, the replica annotations must record
		// the new desired size, or the resize would never be over.
		if _, _, err := c.scaleReplicaSet(ctx, rs, sizes[rs.Name], d); err != nil {
			return err
		}
	}
	return nil
}

// scaleReplicaSetAndRecordEvent resizes rs to size (and refreshes its
// replica annotations), recording a ScalingReplicaSet event on d when the
// size changed.
func (c *Controller) scaleReplicaSetAndRecordEvent(ctx context.Context, rs *appsv1.ReplicaSet, size int32, d *appsv1.Deployment) (bool, *appsv1.ReplicaSet, error) {
	if replicas(rs.Spec.Replicas) == size {
		return false, rs, nil
	}
	return c.scaleReplicaSet(ctx, rs, size, d)
}

func (c *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, size int32, d *appsv1.Deployment) (bool, *appsv1.ReplicaSet, error) {
	oldSize := replicas(rs.Spec.Replicas)
	sizeChanged := oldSize != size
	desired, maxReplicas := replicas(d.Spec.Replicas), replicas(d.Spec.Replicas)+maxSurge(d)
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, desired, maxReplicas) {
		return false, rs, nil
	}
	rsCopy := rs.DeepCopy()
	rsCopy.Spec.Replicas = new(size)
	setReplicasAnnotations(rsCopy, desired, maxReplicas)
	out, err := c.client.AppsV1().ReplicaSets(rsCopy.Namespace).Update(ctx, rsCopy, metav1.UpdateOptions{})
	if err != nil {
		return false, rs, fmt.Errorf("scale replica set %s/%s from %d to %d: %w", rs.Namespace, rs.Name, oldSize, size, err)
	}
	if sizeChanged {
		direction := "up"
		if size < oldSize {
			direction = "down"
		}
		c.recorder.Eventf(d, corev1.EventTypeNormal, EventScalingReplicaSet, "Scaled %s replica set %s from %d to %d", direction, out.Name, oldSize, size)
	}
	return sizeChanged, out, nil
}

// cleanupDeployment deletes the oldest of the old ReplicaSets beyond
// revisionHistoryLimit, sparing those that still have pods, have not been
// observed at their latest generation, or are being deleted.
func (c *Controller) cleanupDeployment(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := int32(len(cleanable)) - *d.Spec.RevisionHistoryLimit
	if diff <= 0 {
		return nil
	}
	sort.Sort(byRevision(cleanable))
	for i := range diff {
		rs := cleanable[i]
		if rs.Status.Replicas != 0 || replicas(rs.Spec.Replicas) != 0 || rs.Generation > rs.Status.ObservedGeneration || rs.DeletionTimestamp != nil {
			continue
		}
		c.logger.Debug("deleting old replica set", "replicaset", rs.Namespace+"/"+rs.Name, "deployment", d.Namespace+"/"+d.Name)
		err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			// Stop at the first failure rather than pile on a busy server.
			return fmt.Errorf("delete old replica set %s/%s: %w", rs.Namespace, rs.Name, err)
		}
	}
	return nil
}

// syncDeploymentStatus writes the status computed from the ReplicaSets, if
// it changed.
func (c *Controller) syncDeploymentStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	status := c.calculateStatus(allRSs, newRS, d)
	if reflect.DeepEqual(d.Status, status) {
		return nil
	}
	d.Status = status
	return c.updateStatus(ctx, d)
}

// calculateStatus computes d's status from its ReplicaSets: the counts and
// the Available condition (Progressing is syncRolloutStatus's business).
func (c *Controller) calculateStatus(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) appsv1.DeploymentStatus {
	available := sumStatus(allRSs, availableReplicas)
	unavailable := max(sumReplicas(allRSs)-available, 0)
	status := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            sumStatus(allRSs, actualReplicas),
		UpdatedReplicas:     sumStatus([]*appsv1.ReplicaSet{newRS}, actualReplicas),
		ReadyReplicas:       sumStatus(allRSs, readyReplicas),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		TerminatingReplicas: terminatingReplicas(allRSs),
		CollisionCount:      d.Status.CollisionCount,
	}
	// Copied one by one: d's conditions must not be changed through status.
	status.Conditions = append([]appsv1.DeploymentCondition(nil), d.Status.Conditions...)
	if available >= replicas(d.Spec.Replicas)-maxUnavailable(d) {
		setCondition(&status, newCondition(c.clock.Now(), appsv1.DeploymentAvailable, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, "Deployment has minimum availability."))
	} else {
		setCondition(&status, newCondition(c.clock.Now(), appsv1.DeploymentAvailable, corev1.ConditionFalse, ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability."))
	}
	return status
}

// isScalingEvent tells whether d was resized since its active ReplicaSets
// were last sized (their desired-replicas annotation differs).
func (c *Controller) isScalingEvent(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (bool, error) {
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return false, err
	}
	for _, rs := range filterActive(append(oldRSs, newRS)) {
		desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
		if ok && desired != replicas(d.Spec.Replicas) {
			return true, nil
		}
	}
	return false, nil
}

// withLabel returns a copy of m with key=value added.
func withLabel(m map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[key] = value
	return out
}

// selectorWithLabel returns a copy of sel that also requires key=value.
func selectorWithLabel(sel *metav1.LabelSelector, key, value string) *metav1.LabelSelector {
	if sel == nil {
		return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
	}
	out := sel.DeepCopy()
	out.MatchLabels = withLabel(out.MatchLabels, key, value)
	return out
}
