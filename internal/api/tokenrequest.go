package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/admission"
	"minik/internal/auth"
)

// TokenRequest, the serviceaccounts/token subresource: POST an
// authentication.k8s.io/v1 TokenRequest to
// /api/v1/namespaces/<ns>/serviceaccounts/<name>/token and get a signed
// token for the service account, optionally bound to a Pod, Secret or
// Node (the token dies with it), as kube-apiserver answers.

const (
	// defaultTokenSeconds is a TokenRequest's default lifetime.
	defaultTokenSeconds = 3600
	// minTokenSeconds is the shortest lifetime kube accepts.
	minTokenSeconds = 600
	// maxTokenSeconds is the longest.
	maxTokenSeconds = 1 << 32
)

var tokenRequestGV = authenticationv1.SchemeGroupVersion

func (h *resourceHandler) serveTokenRequest(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	issuer := h.s.cfg.TokenIssuer
	if issuer == nil {
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
	sinfo, err := inputSerializer(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var tr authenticationv1.TokenRequest
	def := tokenRequestGV.WithKind("TokenRequest")
	if _, _, err := sinfo.Serializer.Decode(body, &def, &tr); err != nil {
		writeError(w, r, cannotBeHandled(def, err))
		return
	}
	out, err := h.s.issueTokenRequest(r.Context(), issuer, info.Namespace, info.Name, &tr)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, o, http.StatusCreated, tokenRequestGV, out)
}

func (s *Server) issueTokenRequest(ctx context.Context, issuer auth.TokenIssuer, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	kind := schema.GroupKind{Group: authenticationv1.GroupName, Kind: "TokenRequest"}
	if tr.Name != "" && tr.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", tr.Name, name))
	}
	if tr.Namespace != "" && tr.Namespace != ns {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if tr.Spec.ExpirationSeconds == nil {
		secs := int64(defaultTokenSeconds)
		tr.Spec.ExpirationSeconds = &secs
	}
	p := field.NewPath("spec", "expirationSeconds")
	switch secs := *tr.Spec.ExpirationSeconds; {
	case secs < minTokenSeconds:
		return nil, apierrors.NewInvalid(kind, name, field.ErrorList{field.Invalid(p, secs, "may not specify a duration less than 10 minutes")})
	case secs > maxTokenSeconds:
		return nil, apierrors.NewInvalid(kind, name, field.ErrorList{field.Invalid(p, secs, "may not specify a duration larger than 2^32 seconds")})
	}
	saGVR := corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	// Admission sees the request as kube's does (NodeRestriction requires
	// a node's token be bound to one of its pods).
	attrs := &admission.Attributes{
		Operation: admission.Create, Kind: tokenRequestGV.WithKind("TokenRequest"), Resource: saGVR, Subresource: "token",
		Namespace: ns, Name: name, Object: tr, User: auth.UserFrom(ctx),
	}
	if err := s.chain.Admit(ctx, attrs); err != nil {
		return nil, err
	}
	if err := s.chain.Validate(ctx, attrs); err != nil {
		return nil, err
	}
	saObj, err := s.getObject(ctx, saGVR, ns, name)
	if err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	spec := auth.TokenSpec{ServiceAccount: sa, Audiences: tr.Spec.Audiences, Expiration: time.Duration(*tr.Spec.ExpirationSeconds) * time.Second}
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		if err := s.bindToken(ctx, &spec, ns, ref); err != nil {
			return nil, err
		}
	}
	token, exp, err := issuer.IssueToken(spec)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(tr.Spec.Audiences) == 0 {
		tr.Spec.Audiences = issuer.APIAudiences()
	}
	return &authenticationv1.TokenRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(s.clock.Now().Truncate(time.Second))},
		Spec:       tr.Spec,
		Status:     authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp)},
	}, nil
}

// bindToken checks a TokenRequest's boundObjectRef against the live
// object and records it in spec.
func (s *Server) bindToken(ctx context.Context, spec *auth.TokenSpec, ns string, ref *authenticationv1.BoundObjectReference) error {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	gvk := gv.WithKind(ref.Kind)
	var (
		obj runtime.Object
		uid types.UID
	)
	core := corev1.SchemeGroupVersion
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		if obj, err = s.getObject(ctx, core.WithResource("pods"), ns, ref.Name); err != nil {
			return err
		}
		pod := obj.(*corev1.Pod)
		if pod.Spec.ServiceAccountName != spec.ServiceAccount.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", spec.ServiceAccount.Name))
		}
		spec.Pod, uid = pod, pod.UID
		if pod.Spec.NodeName != "" {
			if n, err := s.getObject(ctx, core.WithResource("nodes"), "", pod.Spec.NodeName); err == nil {
				spec.Node = n.(*corev1.Node)
			}
		}
	case gvk.Group == "" && gvk.Kind == "Secret":
		if obj, err = s.getObject(ctx, core.WithResource("secrets"), ns, ref.Name); err != nil {
			return err
		}
		spec.Secret = obj.(*corev1.Secret)
		uid = spec.Secret.UID
	case gvk.Group == "" && gvk.Kind == "Node":
		if obj, err = s.getObject(ctx, core.WithResource("nodes"), "", ref.Name); err != nil {
			return err
		}
		spec.Node = obj.(*corev1.Node)
		uid = spec.Node.UID
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && ref.UID != uid {
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return nil
}

// getObject reads an object the server serves.
func (s *Server) getObject(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	h := s.handler(gvr)
	ok := h != nil
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return h.get(ctx, ns, name)
}
