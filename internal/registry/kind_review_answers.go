package registry

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/auth"
)

// The answers of the create-only kinds of authentication.k8s.io and
// authorization.k8s.io: access reviews ask the server's authorizers,
// token reviews its authenticators, as kube-apiserver's registries do.

// AnswerFunc answers the create of a create-only kind: obj is the decoded
// body, ns the request's namespace; the result is written back.
type AnswerFunc func(ctx context.Context, env Env, ns string, obj runtime.Object) (runtime.Object, error)

// wrongBody is the error for a body the API layer decoded into another
// kind than the resource's, which no client can cause.
func wrongBody(obj runtime.Object) error {
	return apierrors.NewInternalError(fmt.Errorf("unexpected body of type %T", obj))
}

// accessReviewSpecErrors validates what SubjectAccessReview and
// SelfSubjectAccessReview share.
func accessReviewSpecErrors(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ra != nil && nra != nil {
		errs = append(errs, field.Invalid(p.Child("nonResourceAttributes"), nra, "cannot be specified in combination with resourceAttributes"))
	}
	if ra == nil && nra == nil {
		errs = append(errs, field.Invalid(p.Child("resourceAttributes"), nra, "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	return errs
}

// reviewAttributes are the attributes a review asks about.
func reviewAttributes(u *auth.User, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) auth.Attributes {
	a := auth.Attributes{User: u}
	if ra != nil {
		version := ra.Version
		if version == "" {
			version = "*"
		}
		a.IsResource = true
		a.Verb, a.Namespace, a.APIGroup, a.APIVersion = ra.Verb, ra.Namespace, ra.Group, version
		a.Resource, a.Subresource, a.Name = ra.Resource, ra.Subresource, ra.Name
		return a
	}
	if nra != nil {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	return a
}

func reviewStatus(ctx context.Context, env Env, a auth.Attributes) authorizationv1.SubjectAccessReviewStatus {
	d, reason, err := env.Authorizer().Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == auth.Allow, Denied: d == auth.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func answerSelfSubjectAccessReview(ctx context.Context, env Env, _ string, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, wrongBody(obj)
	}
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, sar.ObjectMeta) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	errs = append(errs, accessReviewSpecErrors(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes, field.NewPath("spec"))...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(sar.GroupVersionKind().GroupKind(), "", errs)
	}
	sar.Status = reviewStatus(ctx, env, reviewAttributes(auth.UserFrom(ctx), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
	return sar, nil
}

func subjectOf(spec authorizationv1.SubjectAccessReviewSpec) *auth.User {
	u := &auth.User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		u.Extra = make(map[string][]string, len(spec.Extra))
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	return u
}

func subjectAccessReviewSpecErrors(spec authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	p := field.NewPath("spec")
	errs := accessReviewSpecErrors(spec.ResourceAttributes, spec.NonResourceAttributes, p)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(p.Child("user"), spec.User, "at least one of user or group must be specified"))
	}
	return errs
}

var (
	sarKind  = schema.GroupKind{Group: authorizationv1.GroupName, Kind: "SubjectAccessReview"}
	lsarKind = schema.GroupKind{Group: authorizationv1.GroupName, Kind: "LocalSubjectAccessReview"}
)

func answerSubjectAccessReview(ctx context.Context, env Env, _ string, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return nil, wrongBody(obj)
	}
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, sar.ObjectMeta) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	errs = append(errs, subjectAccessReviewSpecErrors(sar.Spec)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(sarKind, "", errs)
	}
	sar.Status = reviewStatus(ctx, env, reviewAttributes(subjectOf(sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
	return sar, nil
}

func answerLocalSubjectAccessReview(ctx context.Context, env Env, ns string, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.LocalSubjectAccessReview)
	if !ok {
		return nil, wrongBody(obj)
	}
	if ra := sar.Spec.ResourceAttributes; ra != nil && ra.Namespace != ns {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", ns))
	}
	errs := subjectAccessReviewSpecErrors(sar.Spec)
	if sar.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), sar.Spec.NonResourceAttributes, "disallowed on this kind of request"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(lsarKind, "", errs)
	}
	sar.Status = reviewStatus(ctx, env, reviewAttributes(subjectOf(sar.Spec), sar.Spec.ResourceAttributes, nil))
	return sar, nil
}

func answerSelfSubjectRulesReview(ctx context.Context, env Env, _ string, obj runtime.Object) (runtime.Object, error) {
	in, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, wrongBody(obj)
	}
	if in.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	rules, incomplete, err := env.Authorizer().RulesFor(ctx, auth.UserFrom(ctx), in.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{Status: authorizationv1.SubjectRulesReviewStatus{
		ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{}, Incomplete: incomplete,
	}}
	for _, r := range rules {
		if len(r.Resources) > 0 {
			out.Status.ResourceRules = append(out.Status.ResourceRules, authorizationv1.ResourceRule{
				Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames,
			})
		}
		if len(r.NonResourceURLs) > 0 {
			out.Status.NonResourceRules = append(out.Status.NonResourceRules, authorizationv1.NonResourceRule{
				Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs,
			})
		}
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}

// UserInfo is a user as authentication.k8s.io/v1 reports it.
func UserInfo(u *auth.User) authenticationv1.UserInfo {
	if u == nil {
		return authenticationv1.UserInfo{}
	}
	ui := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		ui.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			ui.Extra[k] = v
		}
	}
	return ui
}

func answerSelfSubjectReview(ctx context.Context, env Env, _ string, _ runtime.Object) (runtime.Object, error) {
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(env.Now().Truncate(1e9))},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: UserInfo(auth.UserFrom(ctx))},
	}, nil
}

func answerTokenReview(ctx context.Context, env Env, _ string, obj runtime.Object) (runtime.Object, error) {
	tr, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, wrongBody(obj)
	}
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	auds := tr.Spec.Audiences
	if len(auds) == 0 && env.TokenIssuer() != nil {
		auds = env.TokenIssuer().APIAudiences()
	}
	if len(auds) > 0 {
		ctx = auth.WithAudiences(ctx, auds)
	}
	for _, a := range env.Authenticators() {
		ta, ok := a.(auth.TokenAuthenticator)
		if !ok {
			continue
		}
		u, ok, err := ta.AuthenticateToken(ctx, tr.Spec.Token)
		if err != nil {
			tr.Status.Error = err.Error()
		}
		if ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: UserInfo(u), Audiences: auds}
			return tr, nil
		}
	}
	return tr, nil
}
