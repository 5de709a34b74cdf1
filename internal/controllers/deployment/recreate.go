package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rolloutRecreate takes one step of a Recreate rollout: scale every old
// ReplicaSet to zero, wait until none of their pods runs any more, then
// create the new ReplicaSet (if needed) and scale it to the Deployment's
// size.
func (c *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, podMap map[types.UID][]*corev1.Pod) error {
	// The new ReplicaSet is not created yet: nothing may scale up before
	// the old pods are down.
	newRS, oldRSs, err := c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	allRSs := append(oldRSs[:len(oldRSs):len(oldRSs)], newRS)

	scaledDown, err := c.scaleDownOldReplicaSetsForRecreate(ctx, filterActive(oldRSs), d)
	if err != nil {
		return err
	}
	if scaledDown {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d, false)
	}
	if oldPodsRunning(newRS, oldRSs, podMap) {
		return c.syncRolloutStatus(ctx, allRSs, newRS, d, false)
	}

	if newRS == nil {
		newRS, oldRSs, err = c.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
		if err != nil {
			return err
		}
		allRSs = append(oldRSs[:len(oldRSs):len(oldRSs)], newRS)
	}
	if _, _, err := c.scaleReplicaSetAndRecordEvent(ctx, newRS, replicas(d.Spec.Replicas), d); err != nil {
		return err
	}

	if deploymentComplete(d, &d.Status) {
		if err := c.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, allRSs, newRS, d, false)
}

// scaleDownOldReplicaSetsForRecreate scales every old ReplicaSet to zero
// and reports whether it changed any.
func (c *Controller) scaleDownOldReplicaSetsForRecreate(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	scaled := false
	for i, rs := range oldRSs {
		if replicas(rs.Spec.Replicas) == 0 {
			continue
		}
		changed, updated, err := c.scaleReplicaSetAndRecordEvent(ctx, rs, 0, d)
		if err != nil {
			return false, err
		}
		if changed {
			oldRSs[i] = updated
			scaled = true
		}
	}
	return scaled, nil
}

// oldPodsRunning tells whether an old ReplicaSet still reports pods, or
// any pod of an old ReplicaSet is not in a terminal phase (Unknown counts
// as running: it may be).
func oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, podMap map[types.UID][]*corev1.Pod) bool {
	if sumStatus(oldRSs, actualReplicas) > 0 {
		return true
	}
	for uid, pods := range podMap {
		if newRS != nil && newRS.UID == uid {
			continue
		}
		for _, pod := range pods {
			switch pod.Status.Phase {
			case corev1.PodFailed, corev1.PodSucceeded:
			default:
				return true
			}
		}
	}
	return false
}
