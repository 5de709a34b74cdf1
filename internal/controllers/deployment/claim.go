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
	// All of the namespace's ReplicaSets, to find those we control that no
	// longer match the selector too.
	all, err := c.rsLister.ReplicaSets(d.Namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list replica sets of deployment %s/%s: %w", d.Namespace, d.Name, err)
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
