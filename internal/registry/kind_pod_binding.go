package registry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// proxyVerbs are the verbs of the proxy subresources in discovery.
var proxyVerbs = metav1.Verbs{"create", "delete", "get", "patch", "update"}

// connectVerbs are the verbs of exec, attach and portforward.
var connectVerbs = metav1.Verbs{"create", "get"}

// createBinding is pods/binding: the scheduler's one write of
// spec.nodeName, refused for a pod already bound or being deleted.
func createBinding(ctx context.Context, env Env, ns, name string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	b, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", obj))
	}
	gr := schema.GroupResource{Resource: "pods/binding"}
	if b.Name != "" && b.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, name))
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, name, field.ErrorList{
			field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node"}),
		})
	}
	if b.Target.Name == "" {
		return nil, apierrors.NewBadRequest("target.name: Required value")
	}
	pods := env.Store(podsResource)
	_, err := pods.Update(ctx, ns, name, "binding", dryRun, func(current runtime.Object) (runtime.Object, error) {
		pod := current.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(gr, name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(gr, name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(gr, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		pod.Spec.NodeName = b.Target.Name
		setPodScheduled(pod, metav1.NewTime(env.Now().Truncate(1e9)))
		pod.ResourceVersion = ""
		return pod, nil
	})
	if err != nil {
		return nil, err
	}
	return &metav1.Status{Status: metav1.StatusSuccess, Code: 201}, nil
}

// setPodScheduled sets the PodScheduled condition to True. A binding is
// the one write to spec.nodeName and to this condition at once.
func setPodScheduled(pod *corev1.Pod, now metav1.Time) {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled {
			if c.Status != corev1.ConditionTrue {
				c.Status, c.LastTransitionTime, c.Reason, c.Message = corev1.ConditionTrue, now, "", ""
			}
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now})
}
