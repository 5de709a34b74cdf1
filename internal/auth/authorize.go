package auth

import (
	"context"
	"errors"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Union asks authorizers in order, as kube-apiserver's union authorizer
// does: the first Allow or Deny decides; when none decides, the answer is
// NoOpinion with every reason given, one a line, and the errors met.
type Union []Authorizer

// Authorize implements Authorizer.
func (u Union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var (
		reasons []string
		errs    []error
	)
	for _, z := range u {
		d, reason, err := z.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
		if d == Allow || d == Deny {
			return d, reason, err
		}
	}
	return NoOpinion, strings.Join(reasons, "\n"), errors.Join(errs...)
}

// RulesFor implements RuleResolver: the rules of every authorizer that can
// list them; incomplete when one cannot.
func (u Union) RulesFor(ctx context.Context, user *User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	var (
		rules      []rbacv1.PolicyRule
		incomplete bool
		errs       []error
	)
	for _, z := range u {
		r, ok := z.(RuleResolver)
		if !ok {
			incomplete = true
			continue
		}
		rs, inc, err := r.RulesFor(ctx, user, namespace)
		rules = append(rules, rs...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rules, incomplete, errors.Join(errs...)
}

// RuleResolver lists the rules a user holds in a namespace ("" for the
// cluster scope), for SelfSubjectRulesReview and for the RBAC escalation
// check. incomplete tells that some permission may come from elsewhere.
type RuleResolver interface {
	RulesFor(ctx context.Context, u *User, namespace string) (rules []rbacv1.PolicyRule, incomplete bool, err error)
}

// RulesFor implements RuleResolver with no rules: system:masters is
// allowed everything without listing it, as kube's privileged-group
// authorizer is. A rules review shows the rules of its cluster-admin
// binding instead.
func (MastersAuthorizer) RulesFor(context.Context, *User, string) ([]rbacv1.PolicyRule, bool, error) {
	return nil, false, nil
}

// AllowAll is every verb on everything, the rules AlwaysAllow lists.
var AllowAll = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}

// AlwaysAllow allows everything to everyone (kube's
// --authorization-mode=AlwaysAllow). It exists for benchmarks that measure
// the cost of real authorization.
type AlwaysAllow struct{}

// Authorize implements Authorizer.
func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
}

// RulesFor implements RuleResolver.
func (AlwaysAllow) RulesFor(context.Context, *User, string) ([]rbacv1.PolicyRule, bool, error) {
	return AllowAll, false, nil
}
