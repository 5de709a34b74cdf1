package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/clock"

	"minik/internal/admission/quota"
)

// limitRangerAnnotation records which defaults LimitRanger set on a pod.
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// liveLookupTTL is how long a live list, done when the cache holds nothing
// for a namespace, is reused.
const liveLookupTTL = 30 * time.Second

// LimitRanger applies the core/v1 LimitRanges of a pod's namespace, as
// kube's plugin of that name does: when admitting, it fills the container
// defaults (default limits and default requests, noting what it set in the
// kubernetes.io/limit-ranger annotation); when validating, it enforces the
// Container and Pod minimums, maximums and maxLimitRequestRatio with kube's
// messages. Pods are checked on create only (their containers' resources
// are immutable).
type LimitRanger struct {
	// Lister reads LimitRanges from an informer cache. Required.
	Lister corelisters.LimitRangeLister
	// Client lists LimitRanges live when the cache has none for a
	// namespace (a LimitRange created a moment ago). Optional.
	Client kubernetes.Interface
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock

	mu   sync.Mutex
	live map[string]liveLimits
}

type liveLimits struct {
	expiry time.Time
	items  []*corev1.LimitRange
}

// Name implements Mutator and Validator.
func (*LimitRanger) Name() string { return "LimitRanger" }

// Admit implements Mutator: it sets the containers' default resources.
func (l *LimitRanger) Admit(ctx context.Context, a *Attributes) error {
	return l.run(ctx, a, func(lr *corev1.LimitRange, pod *corev1.Pod) error {
		mergePodResources(pod, containerDefaults(lr))
		return nil
	})
}

// Validate implements Validator: it enforces the limits.
func (l *LimitRanger) Validate(ctx context.Context, a *Attributes) error {
	return l.run(ctx, a, validatePodLimits)
}

func (l *LimitRanger) run(ctx context.Context, a *Attributes, fn func(*corev1.LimitRange, *corev1.Pod) error) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" || a.Operation != Create {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	items, err := l.limitRanges(ctx, a.Namespace)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	for _, lr := range items {
		if err := fn(lr, pod); err != nil {
			return NewForbidden(a, err)
		}
	}
	return nil
}

// limitRanges returns a namespace's LimitRanges, sorted by name.
func (l *LimitRanger) limitRanges(ctx context.Context, ns string) ([]*corev1.LimitRange, error) {
	items, err := l.Lister.LimitRanges(ns).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	if len(items) == 0 && l.Client != nil {
		if items, err = l.liveLookup(ctx, ns); err != nil {
			return nil, err
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return items, nil
}

func (l *LimitRanger) liveLookup(ctx context.Context, ns string) ([]*corev1.LimitRange, error) {
	now := time.Now()
	if l.Clock != nil {
		now = l.Clock.Now()
	}
	l.mu.Lock()
	entry, ok := l.live[ns]
	l.mu.Unlock()
	if ok && now.Before(entry.expiry) {
		return entry.items, nil
	}
	list, err := l.Client.CoreV1().LimitRanges(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list limit ranges in %s: %w", ns, err)
	}
	entry = liveLimits{expiry: now.Add(liveLookupTTL)}
	for i := range list.Items {
		entry.items = append(entry.items, &list.Items[i])
	}
	l.mu.Lock()
	if l.live == nil {
		l.live = map[string]liveLimits{}
	}
	l.live[ns] = entry
	l.mu.Unlock()
	return entry.items, nil
}

// containerDefaults are the default requests and limits of a LimitRange's
// Container items.
func containerDefaults(lr *corev1.LimitRange) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.DefaultRequest {
			out.Requests[k] = v.DeepCopy()
		}
		for k, v := range item.Default {
			out.Limits[k] = v.DeepCopy()
		}
	}
	return out
}

// mergePodResources fills what the containers do not state from the
// defaults, and records it in the pod's kubernetes.io/limit-ranger
// annotation.
func mergePodResources(pod *corev1.Pod, defaults corev1.ResourceRequirements) {
	var notes []string
	for i := range pod.Spec.Containers {
		notes = mergeContainerResources(&pod.Spec.Containers[i], defaults, "container", notes)
	}
	for i := range pod.Spec.InitContainers {
		notes = mergeContainerResources(&pod.Spec.InitContainers[i], defaults, "init container", notes)
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

func mergeContainerResources(c *corev1.Container, defaults corev1.ResourceRequirements, prefix string, notes []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	var setRequests, setLimits []string
	for k, v := range defaults.Limits {
		if _, ok := c.Resources.Limits[k]; !ok {
			c.Resources.Limits[k] = v.DeepCopy()
			setLimits = append(setLimits, string(k))
		}
	}
	for k, v := range defaults.Requests {
		if _, ok := c.Resources.Requests[k]; !ok {
			c.Resources.Requests[k] = v.DeepCopy()
			setRequests = append(setRequests, string(k))
		}
	}
	if len(setRequests) > 0 {
		sort.Strings(setRequests)
		notes = append(notes, strings.Join(setRequests, ", ")+fmt.Sprintf(" request for %s %s", prefix, c.Name))
	}
	if len(setLimits) > 0 {
		sort.Strings(setLimits)
		notes = append(notes, strings.Join(setLimits, ", ")+fmt.Sprintf(" limit for %s %s", prefix, c.Name))
	}
	if len(c.Resources.Limits) == 0 {
		c.Resources.Limits = nil
	}
	if len(c.Resources.Requests) == 0 {
		c.Resources.Requests = nil
	}
	return notes
}

// validatePodLimits checks a pod against a LimitRange's Container and Pod
// items, collecting every violation.
func validatePodLimits(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		typ := string(item.Type)
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for i := range cs {
					errs = append(errs, checkLimits(item, typ, cs[i].Resources.Requests, cs[i].Resources.Limits)...)
				}
			}
		case corev1.LimitTypePod:
			requests, limits := podLimitRequests(pod)
			errs = append(errs, checkLimits(item, typ, requests, limits)...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// podLimitRequests is a pod's total as kube's LimitRanger counts it: the
// sidecar formula over the spec, without the pod overhead, the pod-level
// cpu and memory (not huge pages) overriding the containers' sum.
func podLimitRequests(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	opts := resourcehelper.PodResourcesOptions{ExcludeOverhead: true, SkipPodLevelResources: true}
	requests, limits = resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts)
	if r := pod.Spec.Resources; r != nil {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := r.Requests[name]; ok {
				requests[name] = q
			}
			if q, ok := r.Limits[name]; ok {
				limits[name] = q
			}
		}
	}
	return requests, limits
}

// checkLimits applies one LimitRange item's min, max and
// maxLimitRequestRatio, in a stable resource order.
func checkLimits(item corev1.LimitRangeItem, typ string, requests, limits corev1.ResourceList) []error {
	var errs []error
	for _, k := range quota.ResourceNames(item.Min) {
		if err := minConstraint(typ, string(k), item.Min[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range quota.ResourceNames(item.Max) {
		if err := maxConstraint(typ, string(k), item.Max[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range quota.ResourceNames(item.MaxLimitRequestRatio) {
		if err := ratioConstraint(typ, string(k), item.MaxLimitRequestRatio[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// atCommonPrecision returns request, limit and enforced values at a common
// precision: milli-units unless that would overflow.
func atCommonPrecision(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(typ, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[corev1.ResourceName(name)]
	lim, limOK := limits[corev1.ResourceName(name)]
	r, l, e := atCommonPrecision(req, lim, enforced)
	if !reqOK {
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	}
	if r < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	if limOK && l < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(typ, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[corev1.ResourceName(name)]
	lim, limOK := limits[corev1.ResourceName(name)]
	r, l, e := atCommonPrecision(req, lim, enforced)
	if !limOK {
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, typ, enforced.String())
	}
	if l > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	if reqOK && r > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(typ, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[corev1.ResourceName(name)]
	lim, limOK := limits[corev1.ResourceName(name)]
	r, l, _ := atCommonPrecision(req, lim, enforced)
	if !reqOK || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, typ, enforced.String())
	}
	if !limOK || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, typ, enforced.String())
	}
	observed := float64(l) / float64(r)
	display := observed
	limit := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		limit = float64(enforced.MilliValue())
	}
	if observed > limit {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, typ, enforced.String(), display)
	}
	return nil
}
