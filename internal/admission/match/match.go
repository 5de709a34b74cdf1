// Package match decides whether an admission webhook or policy applies to
// a request, as kube's matchers do: rules (operations, API groups and
// versions, resources with their subresources and "*", scope), resource
// names, namespace and object label selectors.
package match

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/admission"
)

// Rule tells whether a rule matches a request.
func Rule(r admissionregistrationv1.RuleWithOperations, a *admission.Attributes) bool {
	return RuleFor(r, a, a.Resource)
}

// RuleFor tells whether a rule matches a request, taking its resource to
// be gvr (an equivalent of the request's).
func RuleFor(r admissionregistrationv1.RuleWithOperations, a *admission.Attributes, gvr schema.GroupVersionResource) bool {
	return scope(r.Scope, a, gvr) && operation(r.Operations, a.Operation) &&
		exactOrWildcard(r.APIGroups, gvr.Group) && exactOrWildcard(r.APIVersions, gvr.Version) &&
		resource(r.Resources, gvr.Resource, a.Subresource)
}

func exactOrWildcard(items []string, want string) bool {
	for _, it := range items {
		if it == "*" || it == want {
			return true
		}
	}
	return false
}

func operation(ops []admissionregistrationv1.OperationType, op admission.Operation) bool {
	for _, o := range ops {
		if o == admissionregistrationv1.OperationAll || string(o) == string(op) {
			return true
		}
	}
	return false
}

// resource matches "pods", "pods/status", "pods/*", "*/status", "*" (any
// resource, no subresource) and "*/*".
func resource(resources []string, res, sub string) bool {
	for _, r := range resources {
		rr, rs := splitResource(r)
		if (rr == "*" || rr == res) && (rs == "*" || rs == sub) {
			return true
		}
	}
	return false
}

func splitResource(r string) (string, string) {
	for i := 0; i < len(r); i++ {
		if r[i] == '/' {
			return r[:i], r[i+1:]
		}
	}
	return r, ""
}

// isNamespaceObject tells whether a request is about a Namespace itself.
func isNamespaceObject(gvr schema.GroupVersionResource) bool {
	return gvr.Group == "" && gvr.Resource == "namespaces"
}

// scope: Namespace objects are cluster-scoped; other requests are
// namespaced when they name a namespace.
func scope(s *admissionregistrationv1.ScopeType, a *admission.Attributes, gvr schema.GroupVersionResource) bool {
	if s == nil || *s == admissionregistrationv1.AllScopes {
		return true
	}
	switch *s {
	case admissionregistrationv1.NamespacedScope:
		return !isNamespaceObject(gvr) && a.Namespace != ""
	case admissionregistrationv1.ClusterScope:
		return isNamespaceObject(gvr) || a.Namespace == ""
	}
	return false
}

// NamespaceGetter reads a namespace (from a cache, then live).
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// Namespace tells whether a request's namespace matches a selector. A
// request for a cluster-scoped object (other than a Namespace) always
// matches; a request for a Namespace is matched on the Namespace's own
// labels. A namespace that does not exist answers its NotFound error.
func Namespace(ctx context.Context, sel *metav1.LabelSelector, a *admission.Attributes, get NamespaceGetter) (bool, error) {
	nsObject := isNamespaceObject(a.Resource)
	if a.Namespace == "" && !nsObject {
		return true, nil
	}
	s, err := parse(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	var lbls map[string]string
	if nsObject && a.Subresource == "" && (a.Operation == admission.Create || a.Operation == admission.Update) && a.Object != nil {
		m, err := meta.Accessor(a.Object)
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		lbls = m.GetLabels()
	} else {
		name := a.Namespace
		if nsObject {
			name = a.Name
		}
		ns, err := get(ctx, name)
		if apierrors.IsNotFound(err) {
			return false, err
		}
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		lbls = ns.Labels
	}
	return s.Matches(labels.Set(lbls)), nil
}

// Object tells whether the object, or the old object, of a request has
// labels matching a selector.
func Object(sel *metav1.LabelSelector, a *admission.Attributes) (bool, error) {
	s, err := parse(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	return objectMatches(a.Object, s) || objectMatches(a.OldObject, s), nil
}

func objectMatches(obj runtime.Object, s labels.Selector) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(m.GetLabels()))
}

// parse converts a label selector; nil selects everything.
func parse(sel *metav1.LabelSelector) (labels.Selector, error) {
	if sel == nil {
		return labels.Everything(), nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("parse label selector: %w", err)
	}
	return s, nil
}

// Equivalents returns the resources served that are equivalent to a
// request's (the same objects under another group or version), for
// matchPolicy Equivalent. minikd serves each resource in one version, so
// the default is none.
type Equivalents func(gvr schema.GroupVersionResource) []schema.GroupVersionResource

// Rules tells whether any rule matches the request, trying equivalent
// resources when matchPolicy is Equivalent.
func Rules(rules []admissionregistrationv1.RuleWithOperations, policy *admissionregistrationv1.MatchPolicyType, a *admission.Attributes, eq Equivalents) bool {
	for _, r := range rules {
		if Rule(r, a) {
			return true
		}
	}
	if policy == nil || *policy != admissionregistrationv1.Equivalent || eq == nil {
		return false
	}
	for _, gvr := range eq(a.Resource) {
		if gvr == a.Resource {
			continue
		}
		for _, r := range rules {
			if RuleFor(r, a, gvr) {
				return true
			}
		}
	}
	return false
}

// namedRules tells whether a named rule matches (rules and, when given,
// the object's name).
func namedRules(rules []admissionregistrationv1.NamedRuleWithOperations, policy *admissionregistrationv1.MatchPolicyType, a *admission.Attributes, eq Equivalents) bool {
	for _, r := range rules {
		if !Rules([]admissionregistrationv1.RuleWithOperations{r.RuleWithOperations}, policy, a, eq) {
			continue
		}
		if len(r.ResourceNames) == 0 {
			return true
		}
		for _, n := range r.ResourceNames {
			if n == a.Name {
				return true
			}
		}
	}
	return false
}

// Resources tells whether a policy's match constraints (or a binding's
// match resources) select a request: the namespace and object selectors
// match, no exclude rule matches, and a resource rule matches (an empty
// rule list matching everything). Selector errors are reported only for
// requests the rules select.
func Resources(ctx context.Context, m *admissionregistrationv1.MatchResources, a *admission.Attributes, get NamespaceGetter, eq Equivalents) (bool, error) {
	if m == nil {
		return true, nil
	}
	nsOK, nsErr := Namespace(ctx, m.NamespaceSelector, a, get)
	if !nsOK && nsErr == nil {
		return false, nil
	}
	objOK, objErr := Object(m.ObjectSelector, a)
	if !objOK && objErr == nil {
		return false, nil
	}
	if namedRules(m.ExcludeResourceRules, m.MatchPolicy, a, eq) {
		return false, nil
	}
	if len(m.ResourceRules) > 0 && !namedRules(m.ResourceRules, m.MatchPolicy, a, eq) {
		return false, nil
	}
	if nsErr != nil {
		return false, nsErr
	}
	if objErr != nil {
		return false, objErr
	}
	return true, nil
}

// exempt are the resources no webhook or policy is called for, so that a
// broken webhook or policy can always be fixed or removed.
var exempt = map[schema.GroupResource]bool{
	{Group: admissionregistrationv1.GroupName, Resource: "validatingwebhookconfigurations"}:   true,
	{Group: admissionregistrationv1.GroupName, Resource: "mutatingwebhookconfigurations"}:     true,
	{Group: admissionregistrationv1.GroupName, Resource: "validatingadmissionpolicies"}:       true,
	{Group: admissionregistrationv1.GroupName, Resource: "validatingadmissionpolicybindings"}: true,
	{Group: admissionregistrationv1.GroupName, Resource: "mutatingadmissionpolicies"}:         true,
	{Group: admissionregistrationv1.GroupName, Resource: "mutatingadmissionpolicybindings"}:   true,
}

// Exempt tells whether a request is for an admission configuration object,
// which webhooks and policies never see (as in kube).
func Exempt(a *admission.Attributes) bool {
	return exempt[a.Resource.GroupResource()]
}
