package deployment

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// claimReplicaSets returns the ReplicaSets d controls, reconciling
// controller references as kube's ControllerRefManager does on the way:
// an orphan that d's selector matches is adopted, a ReplicaSet d controls
// that its selector no longer matches is released. ReplicaSets controlled
// by someone else are never touched. The returned objects are the cache's:
// callers copy before changing them.
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
	adopter := &adoption{c: c, d: d}
	var claimed []*appsv1.ReplicaSet
	var errs []error
	for _, rs := range all {
		matches := sel.Matches(labels.Set(rs.Labels))
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
			if ref.UID != d.UID {
				continue
			}
			if matches {
				claimed = append(claimed, rs)
				continue
			}
			if d.DeletionTimestamp != nil {
				continue
			}
			if err := c.releaseReplicaSet(ctx, d, rs); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if d.DeletionTimestamp != nil || !matches || rs.DeletionTimestamp != nil {
			continue
		}
		if err := adopter.adopt(ctx, rs); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		claimed = append(claimed, rs)
	}
	return claimed, utilerrors.NewAggregate(errs)
}

// adoption adopts orphans for one sync, checking once, with a live read,
// that the Deployment is still there and not being deleted: the cache may
// be behind, and an object being deleted must not adopt.
type adoption struct {
	c       *Controller
	d       *appsv1.Deployment
	checked bool
	err     error
}

func (a *adoption) adopt(ctx context.Context, rs *appsv1.ReplicaSet) error {
	if !a.checked {
		a.checked = true
		a.err = a.canAdopt(ctx)
	}
	if a.err != nil {
		return fmt.Errorf("adopt replica set %s/%s: %w", rs.Namespace, rs.Name, a.err)
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"ownerReferences": []metav1.OwnerReference{*metav1.NewControllerRef(a.d, controllerKind)},
			"uid":             rs.UID,
		},
	})
	if err != nil {
		return err
	}
	_, err = a.c.client.AppsV1().ReplicaSets(rs.Namespace).Patch(ctx, rs.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("adopt replica set %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return nil
}

func (a *adoption) canAdopt(ctx context.Context) error {
	fresh, err := a.c.client.AppsV1().Deployments(a.d.Namespace).Get(ctx, a.d.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if fresh.UID != a.d.UID {
		return fmt.Errorf("original Deployment %s/%s is gone: got uid %s, wanted %s", a.d.Namespace, a.d.Name, fresh.UID, a.d.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("%s/%s has just been deleted at %v", a.d.Namespace, a.d.Name, fresh.DeletionTimestamp)
	}
	return nil
}

// releaseReplicaSet removes d's controller reference from rs. A ReplicaSet
// that is gone, or whose UID or references changed meanwhile, needs no
// release.
func (c *Controller) releaseReplicaSet(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"ownerReferences": []map[string]any{{"$patch": "delete", "uid": d.UID}},
			"uid":             rs.UID,
		},
	})
	if err != nil {
		return err
	}
	_, err = c.client.AppsV1().ReplicaSets(rs.Namespace).Patch(ctx, rs.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
		return fmt.Errorf("release replica set %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return nil
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
