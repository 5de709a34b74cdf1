package deployment

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// syncRolloutStatus writes the status of a Deployment during a rollout,
// with the Progressing condition: NewReplicaSetAvailable once complete,
// ReplicaSetUpdated while it moves, ProgressDeadlineExceeded once it has
// not moved for progressDeadlineSeconds; and the ReplicaSets' ReplicaFailure
// condition. A Deployment that can still time out is requeued for the
// moment its deadline passes. pending says d carries changes not yet
// written (a new revision), to write even if the status is unchanged.
func (c *Controller) syncRolloutStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment, pending bool) error {
	status := c.calculateStatus(allRSs, newRS, d)
	if !hasProgressDeadline(d) {
		removeCondition(&status, appsv1.DeploymentProgressing)
	}

	// A resync of a completed rollout (a single active ReplicaSet) does not
	// estimate progress again.
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	complete := status.Replicas == status.UpdatedReplicas && cur != nil && cur.Reason == ReasonNewReplicaSetAvailable
	if hasProgressDeadline(d) && !complete {
		now := c.clock.Now()
		switch {
		case deploymentComplete(d, &status):
			msg := fmt.Sprintf("Deployment %q has successfully progressed.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name)
			}
			setCondition(&status, newCondition(now, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetAvailable, msg))
		case deploymentProgressing(d, &status):
			msg := fmt.Sprintf("Deployment %q is progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)
			}
			cond := newCondition(now, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, msg)
			// Progress refreshes lastUpdateTime even when the reason stays
			// the same, which setCondition alone would not do.
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					cond.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&status, appsv1.DeploymentProgressing)
			}
			setCondition(&status, cond)
		case deploymentTimedOut(d, &status, now):
			msg := fmt.Sprintf("Deployment %q has timed out progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
			}
			setCondition(&status, newCondition(now, appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, msg))
		}
	}

	// The ReplicaSets' failure condition (the new one's first) becomes the
	// Deployment's.
	if failures := replicaFailures(allRSs, newRS); len(failures) > 0 {
		setCondition(&status, failures[0])
	} else {
		removeCondition(&status, appsv1.DeploymentReplicaFailure)
	}

	if !pending && reflect.DeepEqual(d.Status, status) {
		c.requeueStuckDeployment(d, status)
		return nil
	}
	d.Status = status
	return c.updateStatus(ctx, d)
}

// replicaFailures converts the ReplicaFailure conditions of the new
// ReplicaSet, or else of the others, to Deployment conditions.
func replicaFailures(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []appsv1.DeploymentCondition {
	var out []appsv1.DeploymentCondition
	if newRS != nil {
		for _, cond := range newRS.Status.Conditions {
			if cond.Type == appsv1.ReplicaSetReplicaFailure {
				out = append(out, replicaSetToDeploymentCondition(cond))
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, rs := range allRSs {
		if rs == nil {
			continue
		}
		for _, cond := range rs.Status.Conditions {
			if cond.Type == appsv1.ReplicaSetReplicaFailure {
				out = append(out, replicaSetToDeploymentCondition(cond))
			}
		}
	}
	return out
}

// requeueStuckDeployment queues d again for the moment its progress
// deadline passes (lastUpdateTime of Progressing + progressDeadlineSeconds,
// by the controller's clock), so that a rollout that stopped moving is
// reported without waiting for another event. It returns the delay, 0 for
// now, or -1 when no check is needed.
func (c *Controller) requeueStuckDeployment(d *appsv1.Deployment, status appsv1.DeploymentStatus) time.Duration {
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil {
		return -1
	}
	if deploymentComplete(d, &status) || cur.Reason == ReasonProgressDeadlineExceeded {
		return -1
	}
	after := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(c.clock.Now())
	if after < time.Second {
		c.enqueueRateLimited(d)
		return 0
	}
	// A second more, so that the check does not come a few milliseconds
	// early.
	c.enqueueAfter(d, after+time.Second)
	return after
}
