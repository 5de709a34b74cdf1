package registry

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podEphemeralContainers is the strategy of pods/ephemeralcontainers, as
// kube's EphemeralContainersStrategy: only spec.ephemeralContainers
// changes; existing ones may be neither removed nor changed, and the
// new ones are checked as the pod's spec is.
func podEphemeralContainers() *SubresourceStrategy {
	return &SubresourceStrategy{
		Merge: func(current, sent runtime.Object) runtime.Object {
			next, ok1 := current.(*corev1.Pod)
			in, ok2 := sent.(*corev1.Pod)
			if ok1 && ok2 {
				next.Spec.EphemeralContainers = in.Spec.EphemeralContainers
			}
			return current
		},
		ValidateUpdate: updateValidator(validateEphemeralContainersUpdate),
	}
}

// validateEphemeralContainersUpdate is kube's
// ValidatePodEphemeralContainersUpdate.
func validateEphemeralContainersUpdate(pod, old *corev1.Pod) field.ErrorList {
	errs := validatePodMetadataAndSpec(pod)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := make(map[string]*corev1.EphemeralContainer, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	p := specPath.Child("ephemeralContainers")
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !apiequality.Semantic.DeepEqual(o, *n):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", o.Name, cmp.Diff(o, *n))))
		}
	}
	return errs
}
