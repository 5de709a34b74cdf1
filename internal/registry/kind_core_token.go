package registry

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

// errNoTokenIssuer is the answer of a server without a token issuer: the
// subresource is not there, in the API server's own 404 for an unknown
// path.
func errNoTokenIssuer() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource", Details: &metav1.StatusDetails{},
	}}
}

// createToken is serviceaccounts/token: a token for the service account
// ns/name with the request's audiences and lifetime, bound to the object
// spec.boundObjectRef names. Admission sees the request (NodeRestriction
// requires a node's token be bound to one of its pods). A token request
// ignores dryRun, as it always has here: the token is issued and
// admission is told it is not a dry run.
func createToken(ctx context.Context, env Env, ns, name string, obj runtime.Object, _ bool) (runtime.Object, error) {
	issuer := env.TokenIssuer()
	if issuer == nil {
		return nil, errNoTokenIssuer()
	}
	tr, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest object: %s", obj.GetObjectKind().GroupVersionKind().Kind))
	}
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
	saGR := schema.GroupResource{Resource: "serviceaccounts"}
	if err := env.Admit(ctx, corev1.SchemeGroupVersion.WithResource(saGR.Resource), ns, name, "token", tr, false); err != nil {
		return nil, err
	}
	saObj, err := getObject(ctx, env, saGR, ns, name)
	if err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	spec := auth.TokenSpec{ServiceAccount: sa, Audiences: tr.Spec.Audiences, Expiration: time.Duration(*tr.Spec.ExpirationSeconds) * time.Second}
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		if err := bindToken(ctx, env, &spec, ns, ref); err != nil {
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
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(env.Now().Truncate(time.Second))},
		Spec:       tr.Spec,
		Status:     authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp)},
	}, nil
}

// bindToken checks a TokenRequest's boundObjectRef against the live
// object and records it in spec.
func bindToken(ctx context.Context, env Env, spec *auth.TokenSpec, ns string, ref *authenticationv1.BoundObjectReference) error {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	gvk := gv.WithKind(ref.Kind)
	var (
		obj runtime.Object
		uid types.UID
	)
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		if obj, err = getObject(ctx, env, podsResource, ns, ref.Name); err != nil {
			return err
		}
		pod := obj.(*corev1.Pod)
		if pod.Spec.ServiceAccountName != spec.ServiceAccount.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", spec.ServiceAccount.Name))
		}
		spec.Pod, uid = pod, pod.UID
		if pod.Spec.NodeName != "" {
			if n, err := getObject(ctx, env, nodesResource, "", pod.Spec.NodeName); err == nil {
				spec.Node = n.(*corev1.Node)
			}
		}
	case gvk.Group == "" && gvk.Kind == "Secret":
		if obj, err = getObject(ctx, env, schema.GroupResource{Resource: "secrets"}, ns, ref.Name); err != nil {
			return err
		}
		spec.Secret = obj.(*corev1.Secret)
		uid = spec.Secret.UID
	case gvk.Group == "" && gvk.Kind == "Node":
		if obj, err = getObject(ctx, env, nodesResource, "", ref.Name); err != nil {
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

// getObject reads an object the server serves; a resource it does not
// serve has no such object.
func getObject(ctx context.Context, env Env, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	store := env.Store(gr)
	if store == nil {
		return nil, apierrors.NewNotFound(gr, name)
	}
	return store.Get(ctx, ns, name)
}
