package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Lister returns the objects of a resource in a namespace.
type Lister func(gr schema.GroupResource, namespace string) ([]runtime.Object, error)

// CalculateUsage recomputes what the objects of a quota's namespace use of
// each resource its spec.hard limits, as kube's quota controller does:
// every limited resource some evaluator measures gets a value (zero when
// nothing uses it). Resources whose objects could not be listed are left
// out and reported in the error; the others are still returned.
func CalculateUsage(q *corev1.ResourceQuota, reg *Registry, list Lister) (corev1.ResourceList, error) {
	hard := ResourceNames(q.Spec.Hard)
	used := corev1.ResourceList{}
	var errs []error
	for _, e := range reg.ForQuota(hard) {
		names := e.MatchingResources(hard)
		for _, n := range names {
			used[n] = resource.Quantity{Format: resource.DecimalSI}
		}
		objs, err := list(e.GroupResource(), q.Namespace)
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s in %s: %w", e.GroupResource(), q.Namespace, err))
			for _, n := range names {
				delete(used, n)
			}
			continue
		}
		for _, obj := range objs {
			ok, err := MatchesScopes(q, obj, e)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok {
				continue
			}
			u, err := e.Usage(obj)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			used = Add(used, Mask(u, names))
		}
	}
	return used, utilerrors.NewAggregate(errs)
}
