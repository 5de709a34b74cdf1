package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/controllers"
)

// claimPods returns the pods rs owns after adopting the orphans its
// selector matches and releasing the pods it controls that no longer match,
// as kube's PodControllerRefManager does (controllers.RefManager). Pods
// controlled by another object are left alone. pods come from the lister
// and are not modified.
func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	m := &controllers.RefManager[*corev1.Pod]{
		Controller: rs,
		Kind:       c.w.kind,
		Match:      func(p *corev1.Pod) bool { return selector.Matches(labels.Set(p.Labels)) },
		CanAdopt: controllers.RecheckDeletionTimestamp(rs, func(ctx context.Context) (metav1.Object, error) {
			fresh, err := c.w.get(ctx, rs.Namespace, rs.Name)
			if err != nil {
				return nil, err
			}
			return fresh, nil
		}),
		Patch: func(ctx context.Context, p *corev1.Pod, patch []byte) error {
			_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	}
	return m.Claim(ctx, pods)
}
