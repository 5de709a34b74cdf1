package job

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/controllers"
)

// podsOf returns the pods job controls after adopting the orphans its
// selector matches and releasing the pods it controls that no longer
// match, as kube's getPodsForJob: an adopted pod gets the tracking
// finalizer with its controller reference, a released one loses it.
func (c *Controller) podsOf(ctx context.Context, job *batchv1.Job, selector labels.Selector) ([]*corev1.Pod, error) {
	all, err := c.podLister.Pods(job.Namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list pods of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	var candidates []*corev1.Pod
	for _, p := range all {
		if ref := metav1.GetControllerOfNoCopy(p); ref == nil || ref.UID == job.UID {
			candidates = append(candidates, p)
		}
	}
	m := &controllers.RefManager[*corev1.Pod]{
		Controller: job,
		Kind:       controllerKind,
		Match:      func(p *corev1.Pod) bool { return selector.Matches(labels.Set(p.Labels)) },
		CanAdopt: controllers.RecheckDeletionTimestamp(job, func(ctx context.Context) (metav1.Object, error) {
			return c.client.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		}),
		Patch: func(ctx context.Context, p *corev1.Pod, patch []byte) error {
			_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, withTrackingFinalizer(patch), metav1.PatchOptions{})
			return err
		},
	}
	claimed, err := m.Claim(ctx, candidates)
	for i, p := range claimed {
		if !isControlledBy(p, job) {
			// Adopted: as the patch made it.
			p = p.DeepCopy()
			p.OwnerReferences = append(p.OwnerReferences, *metav1.NewControllerRef(job, controllerKind))
			if !hasTrackingFinalizer(p) {
				p.Finalizers = append(p.Finalizers, TrackingFinalizer)
			}
			claimed[i] = p
		}
	}
	return claimed, err
}

// withTrackingFinalizer extends an owner reference patch of
// controllers.RefManager as kube's Job ref manager does: adopting a pod
// adds the tracking finalizer, releasing it removes the finalizer.
func withTrackingFinalizer(patch []byte) []byte {
	var doc map[string]map[string]any
	if err := json.Unmarshal(patch, &doc); err != nil || doc["metadata"] == nil {
		return patch
	}
	md := doc["metadata"]
	refs, _ := md["ownerReferences"].([]any)
	release := false
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok && m["$patch"] == "delete" {
			release = true
		}
	}
	if release {
		md["$deleteFromPrimitiveList/finalizers"] = []string{TrackingFinalizer}
	} else {
		md["finalizers"] = []string{TrackingFinalizer}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return patch
	}
	return out
}
