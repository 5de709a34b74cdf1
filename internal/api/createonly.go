package api

import (
	"context"
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/auth"
	"minik/internal/registry"
)

// Create-only virtual resources are answered, not stored: a client POSTs
// an object (a SelfSubjectAccessReview, a TokenReview) and gets it back
// with its status filled in, 201 Created. Every other verb is 405. Their
// descriptors are registry.CreateOnly(); what each answers is a function
// of createOnlyKinds. The HTTP side (decoding, namespace checks, encoding)
// is written once, in createOnlyHandler.serve.

// createFunc answers the create of a virtual resource: obj is the decoded
// request body; the result is written back.
type createFunc func(s *Server, ctx context.Context, info *RequestInfo, obj runtime.Object) (runtime.Object, error)

// createOnlyKinds are the virtual kinds the server knows how to answer.
var createOnlyKinds = map[schema.GroupKind]createFunc{
	{Group: authorizationv1.GroupName, Kind: "SelfSubjectAccessReview"}:  (*Server).selfSubjectAccessReview,
	{Group: authorizationv1.GroupName, Kind: "SubjectAccessReview"}:      (*Server).subjectAccessReview,
	{Group: authorizationv1.GroupName, Kind: "LocalSubjectAccessReview"}: (*Server).localSubjectAccessReview,
	{Group: authorizationv1.GroupName, Kind: "SelfSubjectRulesReview"}:   (*Server).selfSubjectRulesReview,
	{Group: authenticationv1.GroupName, Kind: "SelfSubjectReview"}:       (*Server).selfSubjectReview,
	{Group: authenticationv1.GroupName, Kind: "TokenReview"}:             (*Server).tokenReview,
}

// createOnlyHandler serves one create-only resource.
type createOnlyHandler struct {
	h      *resourceHandler
	create createFunc
}

// verbsOf are the verbs discovery advertises for a resource.
func verbsOf(res *registry.Resource) metav1.Verbs {
	if _, ok := createOnlyKinds[res.GroupVersionKind().GroupKind()]; ok {
		return metav1.Verbs{"create"}
	}
	if _, ok := localGVRs.Load(res.GroupVersionResource()); ok {
		return readOnlyVerbs
	}
	return allVerbs
}

// addCreateOnly registers the create-only resources with the server and
// its discovery.
func (s *Server) addCreateOnly(resources []*registry.Resource) error {
	s.createOnly = map[schema.GroupVersionResource]*createOnlyHandler{}
	for _, res := range resources {
		gvr := res.GroupVersionResource()
		fn, ok := createOnlyKinds[res.GroupVersionKind().GroupKind()]
		if !ok {
			return fmt.Errorf("api: create-only resource %s: no answer for kind %s", gvr, res.Kind)
		}
		if _, dup := s.builtin.handlers[gvr]; dup {
			return fmt.Errorf("api: resource %s described twice", gvr)
		}
		if _, dup := s.createOnly[gvr]; dup {
			return fmt.Errorf("api: resource %s described twice", gvr)
		}
		s.createOnly[gvr] = &createOnlyHandler{h: newResourceHandler(s, res), create: fn}
		t := s.builtin
		if _, seen := t.byGroupVersion[res.GroupVersion]; !seen {
			t.groupOrder = append(t.groupOrder, res.GroupVersion)
		}
		t.byGroupVersion[res.GroupVersion] = append(t.byGroupVersion[res.GroupVersion], res)
	}
	return nil
}

// serve answers a request for a create-only resource.
func (c *createOnlyHandler) serve(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	res := c.h.res
	if info.Verb != "create" || info.Name != "" || info.Subresource != "" {
		writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), verbOrMethod(info, r)))
		return
	}
	if res.Namespaced != (info.Namespace != "") {
		writeError(w, r, errNoResource())
		return
	}
	o, err := negotiateOutput(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := c.h.decodeBody(w, r, body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if res.Namespaced {
		m, _ := meta.Accessor(obj)
		if m.GetNamespace() == "" {
			m.SetNamespace(info.Namespace)
		} else if m.GetNamespace() != info.Namespace {
			writeError(w, r, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
			return
		}
	}
	out, err := c.create(c.h.s, r.Context(), info, obj)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, o, http.StatusCreated, res.GroupVersion, out)
}

func verbOrMethod(info *RequestInfo, r *http.Request) string {
	if info.Verb != "" {
		return info.Verb
	}
	return r.Method
}

// authorizer is the server's authorizer chain as one authorizer.
func (s *Server) authorizer() auth.Union { return auth.Union(s.cfg.Authorizers) }

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

func (s *Server) reviewStatus(ctx context.Context, a auth.Attributes) authorizationv1.SubjectAccessReviewStatus {
	d, reason, err := s.authorizer().Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == auth.Allow, Denied: d == auth.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func (s *Server) selfSubjectAccessReview(ctx context.Context, _ *RequestInfo, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.SelfSubjectAccessReview)
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, sar.ObjectMeta) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	errs = append(errs, accessReviewSpecErrors(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes, field.NewPath("spec"))...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(sar.GroupVersionKind().GroupKind(), "", errs)
	}
	sar.Status = s.reviewStatus(ctx, reviewAttributes(auth.UserFrom(ctx), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
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

func (s *Server) subjectAccessReview(ctx context.Context, _ *RequestInfo, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.SubjectAccessReview)
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, sar.ObjectMeta) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	errs = append(errs, subjectAccessReviewSpecErrors(sar.Spec)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(sarKind, "", errs)
	}
	sar.Status = s.reviewStatus(ctx, reviewAttributes(subjectOf(sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
	return sar, nil
}

func (s *Server) localSubjectAccessReview(ctx context.Context, info *RequestInfo, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.LocalSubjectAccessReview)
	if ra := sar.Spec.ResourceAttributes; ra != nil && ra.Namespace != info.Namespace {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", info.Namespace))
	}
	errs := subjectAccessReviewSpecErrors(sar.Spec)
	if sar.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), sar.Spec.NonResourceAttributes, "disallowed on this kind of request"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(lsarKind, "", errs)
	}
	sar.Status = s.reviewStatus(ctx, reviewAttributes(subjectOf(sar.Spec), sar.Spec.ResourceAttributes, nil))
	return sar, nil
}

func (s *Server) selfSubjectRulesReview(ctx context.Context, _ *RequestInfo, obj runtime.Object) (runtime.Object, error) {
	in := obj.(*authorizationv1.SelfSubjectRulesReview)
	if in.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	rules, incomplete, err := s.authorizer().RulesFor(ctx, auth.UserFrom(ctx), in.Spec.Namespace)
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

func userInfo(u *auth.User) authenticationv1.UserInfo {
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

func (s *Server) selfSubjectReview(ctx context.Context, _ *RequestInfo, _ runtime.Object) (runtime.Object, error) {
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(s.clock.Now().Truncate(1e9))},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(auth.UserFrom(ctx))},
	}, nil
}

func (s *Server) tokenReview(ctx context.Context, _ *RequestInfo, obj runtime.Object) (runtime.Object, error) {
	tr := obj.(*authenticationv1.TokenReview)
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	auds := tr.Spec.Audiences
	if len(auds) == 0 && s.cfg.TokenIssuer != nil {
		auds = s.cfg.TokenIssuer.APIAudiences()
	}
	if len(auds) > 0 {
		ctx = auth.WithAudiences(ctx, auds)
	}
	for _, a := range s.cfg.Authenticators {
		ta, ok := a.(auth.TokenAuthenticator)
		if !ok {
			continue
		}
		u, ok, err := ta.AuthenticateToken(ctx, tr.Spec.Token)
		if err != nil {
			tr.Status.Error = err.Error()
		}
		if ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: userInfo(u), Audiences: auds}
			return tr, nil
		}
	}
	return tr, nil
}
