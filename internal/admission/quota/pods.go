package quota

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/clock"
)

// podEvaluator charges pods and their compute resources.
type podEvaluator struct {
	clock clock.PassiveClock
}

var podCountName = ObjectCountName(schema.GroupResource{Resource: "pods"})

// podResources are the names the pod evaluator measures, besides
// hugepages and extended resources.
var podResources = sets.New(
	podCountName, corev1.ResourcePods,
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
)

// constrainedPodResources are the names a quota may limit only if every
// container states them: the compatibility rule kube keeps for cpu and
// memory.
var constrainedPodResources = sets.New(
	corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
)

func (p *podEvaluator) GroupResource() schema.GroupResource {
	return schema.GroupResource{Resource: "pods"}
}

// Handles: a pod's resources are fixed at creation.
func (p *podEvaluator) Handles(op string) bool { return op == OpCreate }

func (p *podEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range input {
		s := string(n)
		if podResources.Has(n) || strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) ||
			strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix+corev1.ResourceHugePagesPrefix) ||
			(strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) && isExtended(corev1.ResourceName(strings.TrimPrefix(s, corev1.DefaultResourceRequestsPrefix)))) {
			out = append(out, n)
		}
	}
	return out
}

// MatchesScope evaluates the pod scopes: Terminating, NotTerminating,
// BestEffort, NotBestEffort, PriorityClass and CrossNamespacePodAffinity.
func (p *podEvaluator) MatchesScope(req corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false, fmt.Errorf("expected a Pod, got %T", obj)
	}
	switch req.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return isTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !isTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return isBestEffort(pod), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !isBestEffort(pod), nil
	case corev1.ResourceQuotaScopePriorityClass:
		if req.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		sel, err := scopeSelectorAsLabels(req)
		if err != nil {
			return false, err
		}
		var set labels.Set
		if pod.Spec.PriorityClassName != "" {
			set = labels.Set{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName}
		}
		return sel.Matches(set), nil
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespaceAffinity(pod), nil
	}
	return false, nil
}

// Constraints: when a quota limits cpu or memory requests or limits, each
// container must state them, or the pod is refused with kube's
// "must specify ..." message.
func (p *podEvaluator) Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("expected a Pod, got %T", obj)
	}
	req := sets.New(required...).Intersection(constrainedPodResources)
	if req.Len() == 0 {
		return nil
	}
	missing := map[corev1.ResourceName]sets.Set[string]{}
	check := func(c *corev1.Container) {
		have := sets.New(ResourceNames(computeUsage(c.Resources.Requests, c.Resources.Limits))...)
		for _, r := range sets.List(req.Difference(have)) {
			if missing[r] == nil {
				missing[r] = sets.New[string]()
			}
			missing[r].Insert(c.Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range sets.List(sets.KeySet(missing)) {
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(sets.List(missing[r]), ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// Usage: every pod counts toward count/pods; a pod that has not finished
// (nor been stuck terminating past its grace period) also charges pods and
// its compute requests and limits.
func (p *podEvaluator) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expected a Pod, got %T", obj)
	}
	out := corev1.ResourceList{podCountName: *resource.NewQuantity(1, resource.DecimalSI)}
	if !p.charged(pod) {
		return out, nil
	}
	// As kube's pod evaluator: the sidecar formula, pod-level resources
	// and the overhead, from the spec (minik's nodes resize nothing).
	var opts resourcehelper.PodResourcesOptions
	return Add(out, computeUsage(resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))), nil
}

// charged tells whether a pod's compute resources count (kube's
// QuotaV1Pod).
func (p *podEvaluator) charged(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if p.clock.Now().After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}

// computeUsage maps a pod's (or a container's) requests and limits to the
// quota names that charge them.
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	pairs := []struct{ base, req, lim corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	}
	for _, p := range pairs {
		if q, ok := requests[p.base]; ok {
			out[p.base] = q.DeepCopy()
			out[p.req] = q.DeepCopy()
		}
		if q, ok := limits[p.base]; ok {
			out[p.lim] = q.DeepCopy()
		}
	}
	for name, q := range requests {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			out[name] = q.DeepCopy()
			out[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		}
		if isExtended(name) {
			out[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		}
	}
	return out
}

// isExtended tells whether a resource name is a vendor's ("example.com/gpu").
func isExtended(name corev1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) &&
		!strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

func isTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// isBestEffort tells whether a pod has the BestEffort QoS class: no cpu or
// memory request or limit anywhere.
func isBestEffort(pod *corev1.Pod) bool {
	positive := func(l corev1.ResourceList) bool {
		for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := l[n]; ok && q.Sign() > 0 {
				return true
			}
		}
		return false
	}
	if r := pod.Spec.Resources; r != nil && (positive(r.Requests) || positive(r.Limits)) {
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			if positive(c.Resources.Requests) || positive(c.Resources.Limits) {
				return false
			}
		}
	}
	return true
}

// usesCrossNamespaceAffinity tells whether a pod's (anti-)affinity terms
// select pods in other namespaces.
func usesCrossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	cross := func(t corev1.PodAffinityTerm) bool { return len(t.Namespaces) > 0 || t.NamespaceSelector != nil }
	var terms []corev1.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		terms = append(terms, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms = append(terms, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if cross(t) {
			return true
		}
	}
	return false
}
