package registry

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podResize is the strategy of pods/resize, as kube v1.37's
// ResizeStrategy (in-place pod resize, its feature gates at their v1.37
// defaults): from the sent pod only the containers' and init containers'
// resources and resizePolicy, and the pod-level resources, are taken;
// the rest of the pod, status included, stays as stored. The update is
// validated as kube's ValidatePodResize does. The API server sets no
// status on a resize: the kubelet reports it, in the PodResizePending and
// PodResizeInProgress conditions.
func podResize() *SubresourceStrategy {
	return &SubresourceStrategy{
		Merge: func(current, sent runtime.Object) runtime.Object {
			next, ok1 := current.(*corev1.Pod)
			in, ok2 := sent.(*corev1.Pod)
			if !ok1 || !ok2 {
				return current
			}
			return mergeResize(next, in)
		},
		ValidateUpdate: updateValidator(validatePodResize),
	}
}

// mergeResize is kube's dropNonResizeUpdates: next is a copy of the
// stored pod, in the pod sent. A pod whose containers were added or
// removed is taken as sent, for validation to refuse it; containers
// renamed or reordered likewise.
func mergeResize(next, in *corev1.Pod) runtime.Object {
	if len(in.Spec.Containers) != len(next.Spec.Containers) || len(in.Spec.InitContainers) != len(next.Spec.InitContainers) {
		return in
	}
	next.Spec.Containers = resizeContainers(in.Spec.Containers, next.Spec.Containers)
	next.Spec.InitContainers = resizeContainers(in.Spec.InitContainers, next.Spec.InitContainers)
	// Pod-level resources are resizable (InPlacePodLevelResourcesVerticalScaling);
	// a client unaware of them, which drops the field, keeps the stored ones.
	if in.Spec.Resources != nil {
		next.Spec.Resources = in.Spec.Resources
	}
	return next
}

// resizeContainers is old with the resources and resize policies of
// sent, or sent itself when a container was renamed or reordered.
func resizeContainers(sent, old []corev1.Container) []corev1.Container {
	if len(sent) == 0 {
		return sent
	}
	out := make([]corev1.Container, len(old))
	copy(out, old)
	for i, c := range sent {
		if out[i].Name != c.Name {
			return sent
		}
		out[i].Resources = c.Resources
		out[i].ResizePolicy = c.ResizePolicy
	}
	return out
}

// validatePodResize is kube's ValidatePodResize: only cpu and memory
// requests and limits change, none is removed, the QoS class stays, and
// a running pod's node must report its containers' resources.
func validatePodResize(pod, old *corev1.Pod) field.ErrorList {
	errs := validateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePodMetadataAndSpec(pod)...)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if old.Spec.OS != nil && old.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	if qosOfStored(old) != podQOS(pod) {
		errs = append(errs, field.Invalid(specPath, string(pod.Status.QOSClass), "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(old) {
		errs = append(errs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}

	munged := *pod.Spec.DeepCopy()
	if podLevelResourcesSet(old) || podLevelResourcesSet(pod) {
		errs = append(errs, validatePodLevelResize(pod, old, &munged)...)
	}

	if orderErrs := validateResizeOrdering(pod, old); orderErrs != nil {
		return append(errs, orderErrs...)
	}
	for i := range old.Spec.InitContainers {
		errs = append(errs, validateContainerResize(&pod.Spec.InitContainers[i].Resources, &old.Spec.InitContainers[i].Resources,
			specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Spec.Containers {
		errs = append(errs, validateContainerResize(&pod.Spec.Containers[i].Resources, &old.Spec.Containers[i].Resources,
			specPath.Child("containers").Index(i).Child("resources"))...)
	}

	for i := range munged.Containers {
		c := &munged.Containers[i]
		dropCPUMemoryChanges(c, &old.Spec.Containers[i])
		if !apiequality.Semantic.DeepEqual(*c, old.Spec.Containers[i]) {
			errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range munged.InitContainers {
		c := &munged.InitContainers[i]
		modified := !apiequality.Semantic.DeepEqual(*c, old.Spec.InitContainers[i])
		dropCPUMemoryChanges(c, &old.Spec.InitContainers[i])
		if !apiequality.Semantic.DeepEqual(*c, old.Spec.InitContainers[i]) {
			errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if modified && !isRestartableInitContainer(c) {
			for _, p := range c.ResizePolicy {
				if p.RestartPolicy == corev1.RestartContainer {
					errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	// InPlacePodVerticalScalingMemoryBackedVolumes is off in v1.37.
	if !apiequality.Semantic.DeepEqual(pod.Spec.Volumes, old.Spec.Volumes) {
		errs = append(errs, field.Forbidden(specPath.Child("volumes"), "volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	if len(errs) > 0 {
		return errs
	}
	if !apiequality.Semantic.DeepEqual(munged, old.Spec) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return errs
}

// resizeSupported is kube's isPodResizeRequestSupported: a pod with a
// running container may be resized only if its node reports the
// containers' resources in their statuses.
func resizeSupported(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func podLevelResourcesSet(pod *corev1.Pod) bool {
	r := pod.Spec.Resources
	return r != nil && len(r.Requests)+len(r.Limits) > 0
}

// validatePodLevelResize is kube's validatePodLevelResourcesResize:
// pod-level requests and limits may not be removed, and only their cpu
// and memory change. It masks those in munged.
func validatePodLevelResize(pod, old *corev1.Pod, munged *corev1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	p := specPath.Child("resources")
	if old.Spec.Resources != nil && pod.Spec.Resources == nil {
		return append(errs, field.Forbidden(p, "pod-level resources cannot be removed"))
	}
	if old.Spec.Resources != nil {
		if resourcesRemoved(pod.Spec.Resources.Requests, old.Spec.Resources.Requests) {
			errs = append(errs, field.Forbidden(p.Child("requests"), "pod-level resource requests cannot be removed"))
		}
		if resourcesRemoved(pod.Spec.Resources.Limits, old.Spec.Resources.Limits) {
			errs = append(errs, field.Forbidden(p.Child("limits"), "pod-level resource limits cannot be removed"))
		}
	}
	if r := munged.Resources; r != nil {
		var oldReqs, oldLims corev1.ResourceList
		if o := old.Spec.Resources; o != nil {
			oldReqs, oldLims = o.Requests, o.Limits
		}
		r.Requests = dropCPUMemoryUpdates(r.Requests, oldReqs)
		r.Limits = dropCPUMemoryUpdates(r.Limits, oldLims)
		if old.Spec.Resources == nil && len(r.Requests) == 0 && len(r.Limits) == 0 && len(r.Claims) == 0 {
			munged.Resources = nil
		}
	}
	if !apiequality.Semantic.DeepEqual(munged.Resources, old.Spec.Resources) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable at pod-level"))
	}
	return errs
}

// validateResizeOrdering refuses containers added, removed, renamed or
// reordered on resize.
func validateResizeOrdering(pod, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		p := specPath.Child(list.name)
		if len(list.new) != len(list.old) {
			errs = append(errs, field.Forbidden(p, list.name+" may not be added or removed on resize"))
			continue
		}
		for i, o := range list.old {
			if list.new[i].Name != o.Name {
				errs = append(errs, field.Forbidden(p.Index(i).Child("name"), list.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// validateContainerResize refuses requests or limits removed on resize.
func validateContainerResize(r, old *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if resourcesRemoved(r.Requests, old.Requests) {
		errs = append(errs, field.Forbidden(p.Child("requests"), "resource requests cannot be removed"))
	}
	if resourcesRemoved(r.Limits, old.Limits) {
		errs = append(errs, field.Forbidden(p.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

func resourcesRemoved(l, old corev1.ResourceList) bool {
	if len(old) > len(l) {
		return true
	}
	for name := range old {
		if _, ok := l[name]; !ok {
			return true
		}
	}
	return false
}

// dropCPUMemoryChanges gives c the cpu and memory requests and limits of
// old, keeping its other resources, for comparing what else changed.
func dropCPUMemoryChanges(c, old *corev1.Container) {
	c.Resources = corev1.ResourceRequirements{
		Limits:   dropCPUMemoryUpdates(c.Resources.Limits, old.Resources.Limits),
		Requests: dropCPUMemoryUpdates(c.Resources.Requests, old.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
}

// dropCPUMemoryUpdates is l with the cpu and memory of old.
func dropCPUMemoryUpdates(l, old corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	if l == nil {
		if old == nil {
			return nil
		}
		out = corev1.ResourceList{}
	} else {
		out = l.DeepCopy()
	}
	delete(out, corev1.ResourceCPU)
	delete(out, corev1.ResourceMemory)
	if q, ok := old[corev1.ResourceCPU]; ok {
		out[corev1.ResourceCPU] = q
	}
	if q, ok := old[corev1.ResourceMemory]; ok {
		out[corev1.ResourceMemory] = q
	}
	return out
}

// isRestartableInitContainer tells whether an init container is a
// sidecar (restartPolicy Always).
func isRestartableInitContainer(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
