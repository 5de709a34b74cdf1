package replicaset

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// claimPods returns the pods rs owns after adopting the orphans its
// selector matches and releasing the pods it controls that no longer match,
// as kube's PodControllerRefManager does. Pods controlled by another
// object are left alone. pods come from the lister and are not modified.
func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	var (
		claimed []*corev1.Pod
		errs    []error
		checked bool
	)
	for _, pod := range pods {
		matches := selector.Matches(labels.Set(pod.Labels))
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			if ref.UID != rs.UID {
				continue
			}
			if matches {
				claimed = append(claimed, pod)
				continue
			}
			if rs.DeletionTimestamp != nil {
				continue
			}
			if err := c.releasePod(ctx, rs, pod); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if !matches || rs.DeletionTimestamp != nil || pod.DeletionTimestamp != nil || pod.Namespace != rs.Namespace {
			continue
		}
		if !checked {
			// The lister may not show a deletion yet: a ReplicaSet being
			// deleted must not adopt, so read it once from the API.
			if err := c.canAdopt(ctx, rs); err != nil {
				return nil, err
			}
			checked = true
		}
		if err := c.adoptPod(ctx, rs, pod); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		claimed = append(claimed, pod)
	}
	if len(errs) > 0 {
		return claimed, errs[0]
	}
	return claimed, nil
}

func (c *Controller) canAdopt(ctx context.Context, rs *appsv1.ReplicaSet) error {
	fresh, err := c.client.AppsV1().ReplicaSets(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	if fresh.UID != rs.UID {
		return fmt.Errorf("replicaset %s/%s is gone: got uid %v, wanted %v", rs.Namespace, rs.Name, fresh.UID, rs.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("replicaset %s/%s has just been deleted at %v", rs.Namespace, rs.Name, fresh.DeletionTimestamp)
	}
	return nil
}

// patchMeta is the metadata of a strategic merge patch that adds or
// removes an owner reference; the pod's UID makes it fail on a pod
// recreated under the same name.
type patchMeta struct {
	Metadata struct {
		OwnerReferences []map[string]interface{} `json:"ownerReferences"`
		UID             types.UID                `json:"uid"`
	} `json:"metadata"`
}

func (c *Controller) adoptPod(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	var p patchMeta
	p.Metadata.UID = pod.UID
	p.Metadata.OwnerReferences = []map[string]interface{}{{
		"apiVersion": controllerKind.GroupVersion().String(), "kind": controllerKind.Kind,
		"name": rs.Name, "uid": rs.UID, "controller": true, "blockOwnerDeletion": true,
	}}
	data, _ := json.Marshal(p)
	if _, err := c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("adopt pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.log.Debug("adopted pod", "replicaset", rs.Namespace+"/"+rs.Name, "pod", pod.Name)
	return nil
}

func (c *Controller) releasePod(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	var p patchMeta
	p.Metadata.UID = pod.UID
	p.Metadata.OwnerReferences = []map[string]interface{}{{"$patch": "delete", "uid": rs.UID}}
	data, _ := json.Marshal(p)
	_, err := c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	// NotFound: the pod is gone. Invalid: it was recreated (its UID
	// differs) or lost the reference already. Either way, nothing to do.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
		return fmt.Errorf("release pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.log.Debug("released pod", "replicaset", rs.Namespace+"/"+rs.Name, "pod", pod.Name)
	return nil
}
