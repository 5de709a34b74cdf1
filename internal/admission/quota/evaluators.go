package quota

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// Operations an evaluator may handle, as admission names them.
const (
	OpCreate = "CREATE"
	OpUpdate = "UPDATE"
)

// Evaluator measures what objects of one resource charge against a quota.
type Evaluator interface {
	// GroupResource is the resource measured.
	GroupResource() schema.GroupResource
	// Handles tells whether a write of the operation ("CREATE", "UPDATE")
	// may change usage, so that admission must charge it.
	Handles(operation string) bool
	// MatchingResources returns the names among input that the evaluator
	// measures.
	MatchingResources(input []corev1.ResourceName) []corev1.ResourceName
	// MatchesScope tells whether an object falls within one scope
	// requirement of a quota.
	MatchesScope(req corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
	// Constraints checks that an object states what a quota tracking the
	// required resources needs (a Pod's containers must request cpu when
	// requests.cpu is limited).
	Constraints(required []corev1.ResourceName, obj runtime.Object) error
	// Usage is what one object charges.
	Usage(obj runtime.Object) (corev1.ResourceList, error)
}

// ObjectCountName is the quota resource name counting objects of a
// resource: "count/pods", "count/deployments.apps".
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	return corev1.ResourceName("count/" + gr.String())
}

// ScopeSelectors returns a quota's scopes and scope selector as one list of
// requirements, all of which an object must meet.
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// Matches tells whether a quota applies to an object: it limits a resource
// the evaluator measures (by status.hard, as the quota controller last
// published it) and every scope selects the object.
func Matches(q *corev1.ResourceQuota, obj runtime.Object, e Evaluator) (bool, error) {
	if len(e.MatchingResources(ResourceNames(q.Status.Hard))) == 0 {
		return false, nil
	}
	return MatchesScopes(q, obj, e)
}

// MatchesScopes tells whether every scope of a quota selects an object.
func MatchesScopes(q *corev1.ResourceQuota, obj runtime.Object, e Evaluator) (bool, error) {
	for _, req := range ScopeSelectors(q) {
		ok, err := e.MatchesScope(req, obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// Registry holds the evaluators by resource. Resources without a specific
// evaluator get an object-count one on first use, as kube's quota
// admission does.
type Registry struct {
	mu         sync.Mutex
	evaluators map[schema.GroupResource]Evaluator
}

// NewRegistry returns the evaluators kube registers by default: pods,
// services, and object counts for configmaps, secrets, resourcequotas and
// replicationcontrollers (also quota-able under their legacy names).
// clock decides when a terminating pod stops being charged.
func NewRegistry(clk clock.PassiveClock) *Registry {
	if clk == nil {
		clk = clock.RealClock{}
	}
	r := &Registry{evaluators: map[schema.GroupResource]Evaluator{}}
	r.add(&podEvaluator{clock: clk})
	r.add(serviceEvaluator{})
	for _, name := range []corev1.ResourceName{corev1.ResourceConfigMaps, corev1.ResourceSecrets, corev1.ResourceQuotas, corev1.ResourceReplicationControllers} {
		r.add(NewObjectCountEvaluator(schema.GroupResource{Resource: string(name)}, name))
	}
	return r
}

func (r *Registry) add(e Evaluator) { r.evaluators[e.GroupResource()] = e }

// Get returns the evaluator of a resource, creating an object-count one
// when there is none.
func (r *Registry) Get(gr schema.GroupResource) Evaluator {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.evaluators[gr]
	if !ok {
		e = NewObjectCountEvaluator(gr)
		r.evaluators[gr] = e
	}
	return e
}

// ForQuota returns the evaluators that measure at least one of a quota's
// hard resources, sorted by resource, including object-count evaluators
// for "count/<resource>.<group>" names.
func (r *Registry) ForQuota(hard []corev1.ResourceName) []Evaluator {
	for _, name := range hard {
		if gr, ok := countedResource(name); ok {
			r.Get(gr)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Evaluator
	for _, e := range r.evaluators {
		if len(e.MatchingResources(hard)) > 0 {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupResource().String() < out[j].GroupResource().String() })
	return out
}

// countedResource parses "count/deployments.apps" into its group resource.
func countedResource(name corev1.ResourceName) (schema.GroupResource, bool) {
	rest, ok := strings.CutPrefix(string(name), "count/")
	if !ok || rest == "" {
		return schema.GroupResource{}, false
	}
	return schema.ParseGroupResource(rest), true
}

// objectCountEvaluator charges one per object created.
type objectCountEvaluator struct {
	gr    schema.GroupResource
	names []corev1.ResourceName
}

// NewObjectCountEvaluator returns an evaluator charging "count/<resource>"
// (and the given legacy names) one per object created.
func NewObjectCountEvaluator(gr schema.GroupResource, legacy ...corev1.ResourceName) Evaluator {
	return &objectCountEvaluator{gr: gr, names: append([]corev1.ResourceName{ObjectCountName(gr)}, legacy...)}
}

func (o *objectCountEvaluator) GroupResource() schema.GroupResource { return o.gr }

func (o *objectCountEvaluator) Handles(op string) bool { return op == OpCreate }

func (o *objectCountEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return Intersection(input, o.names)
}

// MatchesScope: object counts support no scope, so a scoped quota never
// counts them.
func (o *objectCountEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

func (o *objectCountEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (o *objectCountEvaluator) Usage(runtime.Object) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, n := range o.names {
		out[n] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return out, nil
}

// serviceEvaluator charges services, their node ports and load balancers.
type serviceEvaluator struct{}

var serviceResources = []corev1.ResourceName{
	ObjectCountName(schema.GroupResource{Resource: "services"}),
	corev1.ResourceServices, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
}

func (serviceEvaluator) GroupResource() schema.GroupResource {
	return schema.GroupResource{Resource: "services"}
}

// Handles: a Service's type may change on update, and with it its node
// ports and load balancers.
func (serviceEvaluator) Handles(op string) bool { return op == OpCreate || op == OpUpdate }

func (serviceEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return Intersection(input, serviceResources)
}

func (serviceEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

func (serviceEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (serviceEvaluator) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("expected a Service, got %T", obj)
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	out := corev1.ResourceList{
		serviceResources[0]:                  one,
		corev1.ResourceServices:              one,
		corev1.ResourceServicesLoadBalancers: {Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     {Format: resource.DecimalSI},
	}
	ports := *resource.NewQuantity(int64(len(svc.Spec.Ports)), resource.DecimalSI)
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = ports
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a == nil || *a {
			out[corev1.ResourceServicesNodePorts] = ports
		}
		out[corev1.ResourceServicesLoadBalancers] = one
	}
	return out, nil
}

// scopeSelectorAsLabels turns a scope requirement into a label selector
// over the single key that names the scope, as kube evaluates
// PriorityClass scope selectors.
func scopeSelectorAsLabels(req corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch req.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, fmt.Errorf("%q is not a valid scope selector operator", req.Operator)
	}
	r, err := labels.NewRequirement(string(req.ScopeName), op, sets.List(sets.New(req.Values...)))
	if err != nil {
		return nil, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	return labels.NewSelector().Add(*r), nil
}
