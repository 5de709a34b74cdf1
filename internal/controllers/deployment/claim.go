package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/controllers"
)

// claimReplicaSets returns the ReplicaSets d controls, reconciling
// controller references as kube's ControllerRefManager does on the way
// (controllers.RefManager): an orphan that d's selector matches is adopted,
// a ReplicaSet d controls that its selector no longer matches is released.
// ReplicaSets controlled by someone else are never touched. The returned
// objects are the cache's: callers copy before changing them.
func (c *Controller) claimReplicaSets(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	// Those we control whatever their labels, to release those that no
	// longer match the selector too, and the orphans we may adopt.
	all, err := c.replicaSetsOf(d)
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %w", d.Namespace, d.Name, err)
	}
	m := &controllers.RefManager[*appsv1.ReplicaSet]{
		Controller: d,
		Kind:       controllerKind,
		Match:      func(rs *appsv1.ReplicaSet) bool { return sel.Matches(labels.Set(rs.Labels)) },
		CanAdopt: controllers.RecheckDeletionTimestamp(d, func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		}),
		Patch: func(ctx context.Context, rs *appsv1.ReplicaSet, patch []byte) error {
			_, err := c.client.AppsV1().ReplicaSets(rs.Namespace).Patch(ctx, rs.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	}
	return m.Claim(ctx, all)
}

// rsOwnerIndex indexes ReplicaSets by their controller's UID, and orphans
// by orphanKey(namespace).
const rsOwnerIndex = "deployment.rsOwner"

// indexReplicaSetByOwner is rsOwnerIndex's function.
func indexReplicaSetByOwner(obj interface{}) ([]string, error) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{orphanKey(rs.Namespace)}, nil
}

// orphanKey is the rsOwnerIndex key of the ReplicaSets of namespace that
// no controller owns (a UID is never empty, nor contains a slash).
func orphanKey(namespace string) string { return "orphan/" + namespace }

// replicaSetsOf returns, from the cache, the ReplicaSets d controls and
// the orphans of its namespace: the only ones it may keep, release or
// adopt. An index finds them, where listing the namespace would cost
// every sync time in proportion to all its ReplicaSets.
func (c *Controller) replicaSetsOf(d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	var out []*appsv1.ReplicaSet
	for _, key := range []string{string(d.UID), orphanKey(d.Namespace)} {
		objs, err := c.rsIndexer.ByIndex(rsOwnerIndex, key)
		if err != nil {
			return nil, fmt.Errorf("replica sets of deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
		for _, o := range objs {
			if rs, ok := o.(*appsv1.ReplicaSet); ok && rs.Namespace == d.Namespace {
				out = append(out, rs)
			}
		}
	}
	return out, nil
}
