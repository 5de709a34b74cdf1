package rbac

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/component-helpers/auth/rbac/validation"

	"minik/internal/admission"
	"minik/internal/auth"
)

// EscalationCheck refuses writes of Roles, ClusterRoles and their bindings
// that would grant what the requester does not hold, as kube-apiserver's
// RBAC storage does:
//
//   - a Role or ClusterRole may be created or updated by a member of
//     system:masters, by a user allowed to "escalate" it, or by a user
//     holding every permission it grants (a ClusterRole with an
//     aggregationRule needs them all: cluster-admin);
//   - a binding may be created or updated by a member of system:masters, by
//     a user allowed to "bind" its role, or by a user holding every
//     permission of the role, in the binding's namespace.
//
// Writes that change only what the garbage collector changes (owner
// references, finalizers) pass. The messages are kube's.
//
// It is a validating admission plugin; internal/server appends it to the
// admission chain.
type EscalationCheck struct {
	// Authorizer is the server's whole authorizer chain, asked for the
	// "escalate" and "bind" verbs. Required.
	Authorizer auth.Authorizer
	// Rules resolves what the requester holds. Required.
	Rules *Authorizer
}

// Name implements admission.Validator.
func (*EscalationCheck) Name() string { return "RBACEscalation" }

// fullAuthority is what an aggregationRule may gather: everything.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// Validate implements admission.Validator.
func (c *EscalationCheck) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group != rbacv1.GroupName || a.Subresource != "" || (a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil
	}
	u := a.User
	if u != nil && slices.Contains(u.Groups, auth.GroupMasters) {
		return nil
	}
	if a.Operation == admission.Update && onlyGCFieldsChange(a.Object, a.OldObject) {
		return nil
	}
	gr := a.Resource.GroupResource()
	switch obj := a.Object.(type) {
	case *rbacv1.Role:
		if c.allowed(ctx, u, "escalate", gr.Resource, a.Namespace, nameOnUpdate(a)) {
			return nil
		}
		return c.confirmNoEscalation(ctx, u, a.Namespace, obj.Rules, gr, obj.Name)
	case *rbacv1.ClusterRole:
		if c.allowed(ctx, u, "escalate", gr.Resource, "", nameOnUpdate(a)) {
			return nil
		}
		if err := c.confirmNoEscalation(ctx, u, "", obj.Rules, gr, obj.Name); err != nil {
			return err
		}
		if obj.AggregationRule != nil && len(obj.AggregationRule.ClusterRoleSelectors) > 0 {
			if err := c.confirmNoEscalation(ctx, u, "", fullAuthority, gr, obj.Name); err != nil {
				return apierrors.NewForbidden(gr, obj.Name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
			}
		}
		return nil
	case *rbacv1.RoleBinding:
		return c.checkBinding(ctx, u, obj.RoleRef, a.Namespace, gr, obj.Name)
	case *rbacv1.ClusterRoleBinding:
		return c.checkBinding(ctx, u, obj.RoleRef, "", gr, obj.Name)
	}
	return nil
}

// nameOnUpdate is the name the request info carries: none on create.
func nameOnUpdate(a *admission.Attributes) string {
	if a.Operation == admission.Create {
		return ""
	}
	return a.Name
}

func (c *EscalationCheck) checkBinding(ctx context.Context, u *auth.User, ref rbacv1.RoleRef, namespace string, gr schema.GroupResource, name string) error {
	resource := ""
	switch ref.Kind {
	case "ClusterRole":
		resource = "clusterroles"
	case "Role":
		resource = "roles"
	}
	if resource != "" && c.allowedGroup(ctx, u, "bind", ref.APIGroup, resource, namespace, ref.Name) {
		return nil
	}
	rules, err := c.Rules.RoleRefRules(ref, namespace)
	if err != nil {
		if apierrors.IsNotFound(err) && resource != "" {
			// As the API reads it, not as the cache words it.
			return apierrors.NewNotFound(rbacv1.Resource(resource), ref.Name)
		}
		return apierrors.NewInternalError(err)
	}
	return c.confirmNoEscalation(ctx, u, namespace, rules, gr, name)
}

func (c *EscalationCheck) allowed(ctx context.Context, u *auth.User, verb, resource, namespace, name string) bool {
	return c.allowedGroup(ctx, u, verb, rbacv1.GroupName, resource, namespace, name)
}

func (c *EscalationCheck) allowedGroup(ctx context.Context, u *auth.User, verb, group, resource, namespace, name string) bool {
	if u == nil {
		return false
	}
	d, _, err := c.Authorizer.Authorize(ctx, auth.Attributes{
		User: u, Verb: verb, IsResource: true, APIGroup: group, APIVersion: "*",
		Resource: resource, Namespace: namespace, Name: name,
	})
	return err == nil && d == auth.Allow
}

// confirmNoEscalation refuses rules the user does not hold, with kube's
// message listing what is missing.
func (c *EscalationCheck) confirmNoEscalation(ctx context.Context, u *auth.User, namespace string, rules []rbacv1.PolicyRule, gr schema.GroupResource, name string) error {
	if u == nil {
		return apierrors.NewForbidden(gr, name, errors.New("no user on context"))
	}
	owned, _, resolveErr := c.Rules.RulesFor(ctx, u, namespace)
	ok, missing := validation.Covers(owned, rules)
	if ok {
		return nil
	}
	var descs []string
	seen := map[string]bool{}
	for _, r := range CompactRules(missing) {
		if d := CompactString(r); !seen[d] {
			seen[d] = true
			descs = append(descs, d)
		}
	}
	sort.Strings(descs)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, u.Groups, strings.Join(descs, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", resolveErr)
	}
	return apierrors.NewForbidden(gr, name, errors.New(msg))
}

// onlyGCFieldsChange tells whether an update changes nothing but owner
// references and finalizers.
func onlyGCFieldsChange(obj, old runtime.Object) bool {
	if obj == nil || old == nil {
		return false
	}
	copied := obj.DeepCopyObject()
	cm, err := meta.Accessor(copied)
	if err != nil {
		return false
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetManagedFields(om.GetManagedFields())
	cm.SetResourceVersion(om.GetResourceVersion())
	return equality.Semantic.DeepEqual(copied, old)
}

// CompactRules merges rules of one group and one resource (and at most
// one name) that differ only by verb, as kube's escalation message does.
// (kube's own CompactRules lives in kubernetes/pkg/apis/rbac/v1, which is
// not a library module; rule coverage comes from component-helpers.)
func CompactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct {
		group, resource, name string
		named                 bool
	}
	var out []rbacv1.PolicyRule
	simple := map[key]*rbacv1.PolicyRule{}
	var order []key
	for _, r := range rules {
		if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
			out = append(out, r)
			continue
		}
		plain := rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}
		if !reflect.DeepEqual(plain, r) {
			out = append(out, r)
			continue
		}
		k := key{group: r.APIGroups[0], resource: r.Resources[0]}
		if len(r.ResourceNames) == 1 {
			k.name, k.named = r.ResourceNames[0], true
		}
		if existing, ok := simple[k]; ok {
			existing.Verbs = append(existing.Verbs, r.Verbs...)
			continue
		}
		simple[k] = r.DeepCopy()
		order = append(order, k)
	}
	for _, k := range order {
		out = append(out, *simple[k])
	}
	return out
}

// CompactString is kube's compact form of a rule in escalation messages:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["create"]}.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	var args []any
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, name+":%q")
			args = append(args, v)
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return fmt.Sprintf("{"+strings.Join(parts, ", ")+"}", args...)
}
