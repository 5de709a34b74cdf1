package deployment

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
)

// rolloutRolling takes one step of a rolling update: scale the new
// ReplicaSet up as far as maxSurge allows; if it cannot grow, scale old
// ones down as far as maxUnavailable allows; once the rollout is complete,
// clean up old ReplicaSets. Each step ends with a status update, and the
// next step waits for the change it causes to come back through the
// informers.
func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	// The new ReplicaSet's revision and a fresh Progressing condition go
	// out with this step's status, in one write: kube writes them first
	// on their own, then the status again.
	newRS, oldRSs, pending, err := c.getAllReplicaSets(ctx, d, rsList, true, true)
	if err != nil {
		return err
	}
	// A step that fails still records what getAllReplicaSets set.
	failed := func(err error) error {
		if pending {
			// The step's error is the one to report; this write is best effort.
			_ = c.updateStatus(ctx, d)
		}
		return err
	}
	allRSs := append(oldRSs[:len(oldRSs):len(oldRSs)], newRS)

	scaledUp, err := c.reconcileNewReplicaSet(ctx, allRSs, newRS, d)
	if err != nil {
		return failed(err)
	}
	if scaledUp {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d, pending)
	}

	scaledDown, err := c.reconcileOldReplicaSets(ctx, allRSs, filterActive(oldRSs), newRS, d)
	if err != nil {
		return failed(err)
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d, pending)
	}

	if deploymentComplete(d, &d.Status) {
		if err := c.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return failed(err)
		}
	}
	return c.syncRolloutStatus(ctx, allRSs, newRS, d, pending)
}

// reconcileNewReplicaSet grows the new ReplicaSet within the surge (or
// shrinks it to the Deployment's size); it reports whether it scaled.
func (c *Controller) reconcileNewReplicaSet(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	want := replicas(d.Spec.Replicas)
	switch have := replicas(newRS.Spec.Replicas); {
	case have == want:
		return false, nil
	case have > want:
		scaled, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, want, d)
		return scaled, err
	}
	count, err := newRSNewReplicas(d, allRSs, newRS)
	if err != nil {
		return false, err
	}
	scaled, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, count, d)
	return scaled, err
}

// reconcileOldReplicaSets shrinks old ReplicaSets as far as availability
// allows: first their unavailable pods (removing those costs nothing),
// then available ones down to spec.replicas - maxUnavailable available
// pods. It reports whether it scaled anything.
func (c *Controller) reconcileOldReplicaSets(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if sumReplicas(oldRSs) == 0 {
		return false, nil
	}
	allPods := sumReplicas(allRSs)
	minAvailable := replicas(d.Spec.Replicas) - maxUnavailable(d)
	newUnavailable := replicas(newRS.Spec.Replicas) - newRS.Status.AvailableReplicas
	// Beyond the availability floor, and not counting on new pods that are
	// not available yet: otherwise an old pod going down (say, with its
	// node) would let the rollout remove more old pods than it may.
	maxScaledDown := allPods - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}

	// Unhealthy replicas first: they would block the rollout otherwise.
	oldRSs, cleaned, err := c.cleanupUnhealthyReplicas(ctx, oldRSs, d, maxScaledDown)
	if err != nil {
		return false, nil
	}
	scaled, err := c.scaleDownOldReplicaSetsForRollingUpdate(ctx, append(oldRSs[:len(oldRSs):len(oldRSs)], newRS), oldRSs, d)
	if err != nil {
		return false, nil
	}
	return cleaned+scaled > 0, nil
}

// cleanupUnhealthyReplicas scales old ReplicaSets down by their
// unavailable replicas, oldest first, at most maxCleanup in all. The
// ReplicaSet controller deletes not-ready pods first, so availability does
// not drop.
func (c *Controller) cleanupUnhealthyReplicas(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment, maxCleanup int32) ([]*appsv1.ReplicaSet, int32, error) {
	sort.Sort(byCreationTimestamp(oldRSs))
	var total int32
	for i, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		have := replicas(rs.Spec.Replicas)
		if have == 0 || have == rs.Status.AvailableReplicas {
			continue
		}
		down := min(maxCleanup-total, have-rs.Status.AvailableReplicas)
		size := have - down
		if size > have {
			return nil, 0, fmt.Errorf("when cleaning up unhealthy replicas, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, have, size)
		}
		_, updated, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, size, d)
		if err != nil {
			return nil, total, err
		}
		total += down
		oldRSs[i] = updated
	}
	return oldRSs, total, nil
}

// scaleDownOldReplicaSetsForRollingUpdate scales old ReplicaSets down,
// oldest first, by as many pods as are available above
// spec.replicas - maxUnavailable.
func (c *Controller) scaleDownOldReplicaSetsForRollingUpdate(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) (int32, error) {
	minAvailable := replicas(d.Spec.Replicas) - maxUnavailable(d)
	available := sumStatus(allRSs, availableReplicas)
	if available <= minAvailable {
		return 0, nil
	}
	sort.Sort(byCreationTimestamp(oldRSs))
	var total int32
	want := available - minAvailable
	for _, rs := range oldRSs {
		if total >= want {
			break
		}
		have := replicas(rs.Spec.Replicas)
		if have == 0 {
			continue
		}
		down := min(have, want-total)
		size := have - down
		if size > have {
			return 0, fmt.Errorf("when scaling down old RS, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, have, size)
		}
		if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, size, d); err != nil {
			return total, err
		}
		total += down
	}
	return total, nil
}
