package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	nodelisters "k8s.io/client-go/listers/node/v1"
)

// RuntimeClass applies a new pod's RuntimeClass, as kube's plugin of that
// name does: the class must exist ("pod rejected: RuntimeClass "x" not
// found"); its overhead becomes the pod's spec.overhead (a pod that sets
// another is refused, and so is one that sets an overhead its class does
// not define); its scheduling node selector is merged into the pod's (a
// conflicting value is refused) and its tolerations are added.
type RuntimeClass struct {
	// Lister reads RuntimeClasses from an informer cache. Required.
	Lister nodelisters.RuntimeClassLister
	// Client reads a RuntimeClass live when the cache does not have it.
	// Optional.
	Client kubernetes.Interface
}

// Name implements Mutator and Validator.
func (*RuntimeClass) Name() string { return "RuntimeClass" }

// Admit implements Mutator: it sets a new pod's overhead and scheduling
// from its RuntimeClass.
func (r *RuntimeClass) Admit(ctx context.Context, a *Attributes) error {
	pod, rc, err := r.prepare(ctx, a)
	if err != nil || pod == nil || rc == nil {
		return err
	}
	if rc.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return NewForbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if s := rc.Scheduling; s != nil {
		sel := pod.Spec.NodeSelector
		if sel == nil && len(s.NodeSelector) > 0 {
			sel = map[string]string{}
		}
		for k, v := range s.NodeSelector {
			if pv, ok := sel[k]; ok && pv != v {
				return NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
			}
			sel[k] = v
		}
		pod.Spec.NodeSelector = sel
		pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	}
	return nil
}

// Validate implements Validator: a pod's overhead is its RuntimeClass's.
func (r *RuntimeClass) Validate(ctx context.Context, a *Attributes) error {
	pod, rc, err := r.prepare(ctx, a)
	if err != nil || pod == nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return NewForbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
	} else if pod.Spec.Overhead != nil {
		return NewForbidden(a, fmt.Errorf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}

// prepare returns the created pod and its RuntimeClass (nil when it names
// none); other requests give no pod.
func (r *RuntimeClass) prepare(ctx context.Context, a *Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	if a.Operation != Create || a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil, nil, nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	name := *pod.Spec.RuntimeClassName
	rc, err := r.Lister.Get(name)
	if apierrors.IsNotFound(err) && r.Client != nil {
		rc, err = r.Client.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil, NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("runtimeclass %s: %w", name, err)
	}
	return pod, rc, nil
}

// mergeTolerations adds to a pod's tolerations those of its class that
// none of the pod's already covers, as kube's MergeTolerations does.
func mergeTolerations(pod, extra []corev1.Toleration) []corev1.Toleration {
	out := pod
	for _, t := range extra {
		covered := false
		for i := range out {
			if covers(&out[i], &t) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, t)
		}
	}
	return out
}

// covers tells whether toleration a tolerates everything b does.
func covers(a, b *corev1.Toleration) bool {
	if a.Effect != "" && a.Effect != b.Effect {
		return false
	}
	if a.Effect == corev1.TaintEffectNoExecute {
		switch {
		case a.TolerationSeconds == nil:
		case b.TolerationSeconds == nil || *b.TolerationSeconds > *a.TolerationSeconds:
			return false
		}
	}
	switch a.Operator {
	case corev1.TolerationOpExists:
		return a.Key == "" || a.Key == b.Key
	case corev1.TolerationOpEqual, "":
		return a.Key == b.Key && (b.Operator == corev1.TolerationOpEqual || b.Operator == "") && a.Value == b.Value
	}
	return false
}
