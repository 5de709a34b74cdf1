// Package rbac is minik's RBAC: an authorizer evaluating
// rbac.authorization.k8s.io/v1 Roles, ClusterRoles and their bindings from
// informer caches (never a storage read per request), the privilege
// escalation check run when RBAC objects are written, the bootstrap policy
// reconciled at start, and the ClusterRole aggregation controller.
//
// Decisions, reasons and messages follow kube-apiserver's RBAC authorizer
// word for word.
package rbac

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"minik/internal/auth"
)

// Authorizer decides from RBAC objects. It allows or has no opinion; it
// never denies (RBAC only grants). It also resolves a user's rules, for
// SelfSubjectRulesReview and the escalation check.
type Authorizer struct {
	roles               rbaclisters.RoleLister
	roleBindings        rbaclisters.RoleBindingLister
	clusterRoles        rbaclisters.ClusterRoleLister
	clusterRoleBindings rbaclisters.ClusterRoleBindingLister
	synced              []cache.InformerSynced

	// The bindings, sorted by name, are kept between requests and listed
	// again only after a binding changed: a request then costs no list,
	// no sort and no allocation for them. Without informers (tests),
	// every request lists.
	tracked    bool
	generation atomic.Uint64
	mu         sync.Mutex
	snap       atomic.Pointer[bindingSnapshot]
}

// bindingSnapshot is the bindings at one generation.
type bindingSnapshot struct {
	generation          uint64
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
	// roleBindings holds the namespaces asked about so far.
	roleBindings map[string][]*rbacv1.RoleBinding
}

// New returns an authorizer reading the RBAC informers of f (registering
// them); the caller starts f.
func New(f informers.SharedInformerFactory) *Authorizer {
	r := f.Rbac().V1()
	a := NewFromListers(r.Roles().Lister(), r.RoleBindings().Lister(), r.ClusterRoles().Lister(), r.ClusterRoleBindings().Lister())
	a.synced = []cache.InformerSynced{
		r.Roles().Informer().HasSynced, r.RoleBindings().Informer().HasSynced,
		r.ClusterRoles().Informer().HasSynced, r.ClusterRoleBindings().Informer().HasSynced,
	}
	bump := func(any) { a.generation.Add(1) }
	handler := cache.ResourceEventHandlerFuncs{AddFunc: bump, UpdateFunc: func(_, o any) { bump(o) }, DeleteFunc: bump}
	_, err1 := r.RoleBindings().Informer().AddEventHandler(handler)
	_, err2 := r.ClusterRoleBindings().Informer().AddEventHandler(handler)
	a.tracked = err1 == nil && err2 == nil
	return a
}

// bindings returns the ClusterRoleBindings, and the RoleBindings of
// namespace when it is not empty, sorted by name.
func (a *Authorizer) bindings(namespace string) ([]*rbacv1.ClusterRoleBinding, []*rbacv1.RoleBinding, error) {
	if !a.tracked {
		return a.listBindings(namespace)
	}
	gen := a.generation.Load()
	if s := a.snap.Load(); s != nil && s.generation == gen {
		if rbs, ok := s.roleBindings[namespace]; ok || namespace == "" {
			return s.clusterRoleBindings, rbs, nil
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.snap.Load()
	if s == nil || s.generation != gen {
		crbs, _, err := a.listBindings("")
		if err != nil {
			return nil, nil, err
		}
		s = &bindingSnapshot{generation: gen, clusterRoleBindings: crbs, roleBindings: map[string][]*rbacv1.RoleBinding{}}
	}
	rbs, ok := s.roleBindings[namespace]
	if namespace != "" && !ok {
		_, list, err := a.listBindings(namespace)
		if err != nil {
			return nil, nil, err
		}
		// Copy on write: readers of the old snapshot keep their map.
		next := &bindingSnapshot{generation: s.generation, clusterRoleBindings: s.clusterRoleBindings, roleBindings: make(map[string][]*rbacv1.RoleBinding, len(s.roleBindings)+1)}
		for k, v := range s.roleBindings {
			next.roleBindings[k] = v
		}
		next.roleBindings[namespace] = list
		s, rbs = next, list
	}
	a.snap.Store(s)
	return s.clusterRoleBindings, rbs, nil
}

// listBindings lists the bindings from the listers and sorts them by name,
// so that the binding a reason names does not change from one request to
// the next (a lister lists in map order).
func (a *Authorizer) listBindings(namespace string) ([]*rbacv1.ClusterRoleBinding, []*rbacv1.RoleBinding, error) {
	crbs, err := a.clusterRoleBindings.List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(crbs, func(a, b *rbacv1.ClusterRoleBinding) int { return strings.Compare(a.Name, b.Name) })
	if namespace == "" {
		return crbs, nil, nil
	}
	rbs, err := a.roleBindings.RoleBindings(namespace).List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	if rbs == nil {
		rbs = []*rbacv1.RoleBinding{}
	}
	slices.SortFunc(rbs, func(a, b *rbacv1.RoleBinding) int { return strings.Compare(a.Name, b.Name) })
	return crbs, rbs, nil
}

// NewFromListers returns an authorizer reading the given listers.
func NewFromListers(roles rbaclisters.RoleLister, roleBindings rbaclisters.RoleBindingLister,
	clusterRoles rbaclisters.ClusterRoleLister, clusterRoleBindings rbaclisters.ClusterRoleBindingLister) *Authorizer {
	return &Authorizer{roles: roles, roleBindings: roleBindings, clusterRoles: clusterRoles, clusterRoleBindings: clusterRoleBindings}
}

// HasSynced tells whether the informers have synced.
func (a *Authorizer) HasSynced() bool {
	for _, s := range a.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Authorize implements auth.Authorizer.
func (a *Authorizer) Authorize(_ context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	var (
		allowedBy string
		errs      []error
	)
	a.visitRules(attrs.User, attrs.Namespace, func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
			return true
		}
		if RuleAllows(attrs, rule) {
			allowedBy = source.String()
			return false
		}
		return true
	})
	if allowedBy != "" {
		return auth.Allow, "RBAC: allowed by " + allowedBy, nil
	}
	reason := ""
	if len(errs) > 0 {
		reason = "RBAC: " + aggregateString(errs)
	}
	return auth.NoOpinion, reason, nil
}

// aggregateString formats errors as apimachinery's aggregate error does.
func aggregateString(errs []error) string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	msgs := make([]string, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		if m := e.Error(); !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// RulesFor implements auth.RuleResolver: the rules of every binding that
// applies to u, cluster-wide and, when namespace is not empty, in it.
// Missing roles are reported in err; the rules found are still returned.
func (a *Authorizer) RulesFor(_ context.Context, u *auth.User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	var (
		rules []rbacv1.PolicyRule
		errs  []error
	)
	a.visitRules(u, namespace, func(_ fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
		} else {
			rules = append(rules, *rule)
		}
		return true
	})
	return rules, false, errors.Join(errs...)
}

// visitRules calls visit with each rule that applies to u in namespace:
// ClusterRoleBindings first, then the RoleBindings of the namespace, as
// kube's rule resolver does. visit returns false to stop.
func (a *Authorizer) visitRules(u *auth.User, namespace string, visit func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool) {
	if u == nil {
		return
	}
	crbs, rbs, err := a.bindings(namespace)
	if err != nil {
		visit(nil, nil, err)
		return
	}
	for _, b := range crbs {
		i, ok := appliesTo(u, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := a.roleRefRules(b.RoleRef, "")
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		d := &bindingDescriber{clusterBinding: b, subject: &b.Subjects[i]}
		for j := range rules {
			if !visit(d, &rules[j], nil) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	for _, b := range rbs {
		i, ok := appliesTo(u, b.Subjects, namespace)
		if !ok {
			continue
		}
		rules, err := a.roleRefRules(b.RoleRef, namespace)
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		d := &bindingDescriber{binding: b, subject: &b.Subjects[i]}
		for j := range rules {
			if !visit(d, &rules[j], nil) {
				return
			}
		}
	}
}

// roleRefRules returns the rules a role reference grants in namespace. The
// listers' errors read as kube's: clusterrole.rbac.authorization.k8s.io
// "x" not found.
func (a *Authorizer) roleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		r, err := a.roles.Roles(namespace).Get(ref.Name)
		if err != nil {
			return nil, err
		}
		return r.Rules, nil
	case "ClusterRole":
		r, err := a.clusterRoles.Get(ref.Name)
		if err != nil {
			return nil, err
		}
		return r.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// RoleRefRules returns the rules a binding's role reference grants (for the
// escalation check).
func (a *Authorizer) RoleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	return a.roleRefRules(ref, namespace)
}

// appliesTo returns the index of the first subject that is u.
func appliesTo(u *auth.User, subjects []rbacv1.Subject, namespace string) (int, bool) {
	for i := range subjects {
		if appliesToUser(u, &subjects[i], namespace) {
			return i, true
		}
	}
	return 0, false
}

func appliesToUser(u *auth.User, s *rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return u.Name == s.Name
	case rbacv1.GroupKind:
		for _, g := range u.Groups {
			if g == s.Name {
				return true
			}
		}
		return false
	case rbacv1.ServiceAccountKind:
		ns := namespace
		if s.Namespace != "" {
			ns = s.Namespace
		}
		if ns == "" {
			return false
		}
		return matchesServiceAccount(u.Name, ns, s.Name)
	}
	return false
}

// matchesServiceAccount tells, without allocating, whether user is
// system:serviceaccount:<ns>:<name>.
func matchesServiceAccount(user, ns, name string) bool {
	rest, ok := strings.CutPrefix(user, auth.ServiceAccountUserPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ns)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ":")
	return ok && rest == name
}

// bindingDescriber describes the binding that allowed a request, as kube's
// RBAC reasons do.
type bindingDescriber struct {
	clusterBinding *rbacv1.ClusterRoleBinding
	binding        *rbacv1.RoleBinding
	subject        *rbacv1.Subject
}

func (d *bindingDescriber) String() string {
	if d.clusterBinding != nil {
		b := d.clusterBinding
		return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(d.subject, ""))
	}
	b := d.binding
	return fmt.Sprintf("RoleBinding %q of %s %q to %s", b.Name+"/"+b.Namespace, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(d.subject, b.Namespace))
}

func describeSubject(s *rbacv1.Subject, bindingNamespace string) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}

// RulesAllow tells whether any rule allows the request.
func RulesAllow(a auth.Attributes, rules ...rbacv1.PolicyRule) bool {
	for i := range rules {
		if RuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

// RuleAllows tells whether a rule allows a request: verbs (with "*"), API
// groups (with "*"), resources (with "*" and "*/subresource"), resource
// names, or non-resource URLs (with a trailing "*").
func RuleAllows(a auth.Attributes, r *rbacv1.PolicyRule) bool {
	if a.IsResource {
		resource := a.Resource
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		return verbMatches(r, a.Verb) && apiGroupMatches(r, a.APIGroup) &&
			resourceMatches(r, resource, a.Subresource) && resourceNameMatches(r, a.Name)
	}
	return verbMatches(r, a.Verb) && nonResourceURLMatches(r, a.Path)
}

func verbMatches(r *rbacv1.PolicyRule, verb string) bool {
	for _, v := range r.Verbs {
		if v == rbacv1.VerbAll || v == verb {
			return true
		}
	}
	return false
}

func apiGroupMatches(r *rbacv1.PolicyRule, group string) bool {
	for _, g := range r.APIGroups {
		if g == rbacv1.APIGroupAll || g == group {
			return true
		}
	}
	return false
}

func resourceMatches(r *rbacv1.PolicyRule, combined, subresource string) bool {
	for _, res := range r.Resources {
		if res == rbacv1.ResourceAll || res == combined {
			return true
		}
		if subresource != "" && len(res) == len(subresource)+2 && strings.HasPrefix(res, "*/") && strings.HasSuffix(res, subresource) {
			return true
		}
	}
	return false
}

func resourceNameMatches(r *rbacv1.PolicyRule, name string) bool {
	if len(r.ResourceNames) == 0 {
		return true
	}
	for _, n := range r.ResourceNames {
		if n == name {
			return true
		}
	}
	return false
}

func nonResourceURLMatches(r *rbacv1.PolicyRule, path string) bool {
	for _, u := range r.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}
