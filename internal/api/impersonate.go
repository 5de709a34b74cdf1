package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"minik/internal/auth"
)

// Impersonation is the stage of the handler chain between authentication
// and authorization, as kube-apiserver's impersonation filter: a request
// carrying Impersonate-User (and, optionally, Impersonate-Group, repeated,
// Impersonate-Uid and Impersonate-Extra-<key>) acts as that user, once the
// requester is allowed the verb "impersonate" on each thing it asks for:
//
//   - users/<name> (core group), or serviceaccounts/<name> in namespace
//     <ns> when the user is system:serviceaccount:<ns>:<name>;
//   - groups/<name> (core group), one check per group;
//   - uids/<uid> (authentication.k8s.io);
//   - userextras/<key> named <value> (authentication.k8s.io), one check
//     per value.
//
// The first refusal answers 403 in kube's words, naming the requester;
// a group, uid or extra without a user is a 400. What passes is
// authorized, admitted and stored as the impersonated user; the audit
// event keeps the requester as its user and records the impersonated one
// beside it.

// impersonationRequest is one thing a request asks to act as.
type impersonationRequest struct {
	// ref names it as kube's filter does, for the 400 message.
	ref corev1.ObjectReference
	// attrs is what the requester must be allowed (without the user).
	attrs auth.Attributes
}

// impersonationRequests reads the Impersonate-* headers in kube's order:
// the user, the groups, the extras (by key), the uid. None means the
// request impersonates no one.
func impersonationRequests(h http.Header) ([]impersonationRequest, error) {
	var reqs []impersonationRequest
	check := func(group, resource, namespace, name string) auth.Attributes {
		return auth.Attributes{
			Verb: "impersonate", IsResource: true, APIGroup: group, APIVersion: "v1",
			Namespace: namespace, Resource: resource, Name: name,
		}
	}
	user := h.Get(authenticationv1.ImpersonateUserHeader)
	if user != "" {
		if ns, name, ok := splitServiceAccount(user); ok {
			reqs = append(reqs, impersonationRequest{
				ref:   corev1.ObjectReference{Kind: "ServiceAccount", Namespace: ns, Name: name},
				attrs: check(corev1.GroupName, "serviceaccounts", ns, name),
			})
		} else {
			reqs = append(reqs, impersonationRequest{
				ref:   corev1.ObjectReference{Kind: "User", Name: user},
				attrs: check(corev1.GroupName, "users", "", user),
			})
		}
	}
	groups := h.Values(authenticationv1.ImpersonateGroupHeader)
	for _, g := range groups {
		reqs = append(reqs, impersonationRequest{
			ref:   corev1.ObjectReference{Kind: "Group", Name: g},
			attrs: check(corev1.GroupName, "groups", "", g),
		})
	}
	// kube walks the header map in Go's random order; sorting keeps the
	// checks, and the 400 message, the same from one request to the next.
	var extraHeaders []string
	for name := range h {
		if strings.HasPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			extraHeaders = append(extraHeaders, name)
		}
	}
	slices.Sort(extraHeaders)
	for _, name := range extraHeaders {
		key := extraKey(name)
		for _, v := range h[name] {
			a := check(authenticationv1.GroupName, "userextras", "", v)
			a.Subresource = key
			reqs = append(reqs, impersonationRequest{
				ref:   corev1.ObjectReference{Kind: "UserExtra", APIVersion: authenticationv1.SchemeGroupVersion.String(), Name: v, FieldPath: key},
				attrs: a,
			})
		}
	}
	uid := h.Get(authenticationv1.ImpersonateUIDHeader)
	if uid != "" {
		reqs = append(reqs, impersonationRequest{
			ref:   corev1.ObjectReference{Kind: "UID", APIVersion: authenticationv1.SchemeGroupVersion.String(), Name: uid},
			attrs: check(authenticationv1.GroupName, "uids", "", uid),
		})
	}
	if user == "" && (len(groups) > 0 || len(extraHeaders) > 0 || uid != "") {
		refs := make([]corev1.ObjectReference, len(reqs))
		for i := range reqs {
			refs[i] = reqs[i].ref
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("requested %v without impersonating a user", refs))
	}
	return reqs, nil
}

// extraKey is the user extra key an Impersonate-Extra-<key> header sets:
// lower case, %-decoded (client-go escapes what a header name cannot
// hold); a key that does not decode is kept as it came.
func extraKey(header string) string {
	key := strings.ToLower(strings.TrimPrefix(header, authenticationv1.ImpersonateUserExtraHeaderPrefix))
	if k, err := url.PathUnescape(key); err == nil {
		return k
	}
	return key
}

// splitServiceAccount tells whether an impersonated user name is a
// service account's, with kube's validation: a valid namespace name and a
// valid service account name, otherwise the name is a plain user's.
func splitServiceAccount(user string) (namespace, name string, ok bool) {
	namespace, name, ok = auth.SplitServiceAccountUser(user)
	if !ok || len(apivalidation.ValidateNamespaceName(namespace, false)) > 0 || len(apivalidation.ValidateServiceAccountName(name, false)) > 0 {
		return "", "", false
	}
	return namespace, name, true
}

// impersonate returns the user a request acts as, or nil when it carries
// no Impersonate-* header. Each thing asked for is authorized for
// requester first; the first that is not allowed (or whose check fails)
// is a 403. On success the Impersonate-* headers are removed from r, so
// that nothing further down the chain acts on them twice.
func (s *Server) impersonate(ctx context.Context, r *http.Request, requester *auth.User) (*auth.User, error) {
	reqs, err := impersonationRequests(r.Header)
	if err != nil || len(reqs) == 0 {
		return nil, err
	}
	// Groups given are the whole truth; without them a service account
	// gets its fixed ones.
	groupsSpecified := len(r.Header.Values(authenticationv1.ImpersonateGroupHeader)) > 0
	u := &auth.User{Groups: []string{}, Extra: map[string][]string{}}
	for _, req := range reqs {
		a := req.attrs
		a.User = requester
		// Unlike the request's own authorization, an evaluation error
		// refuses even beside an Allow, as kube's filter does.
		d, reason, err := s.authorizer().Authorize(ctx, a)
		if err != nil || d != auth.Allow {
			return nil, forbidden(a, reason)
		}
		switch a.Resource {
		case "serviceaccounts":
			u.Name = auth.ServiceAccountUser(a.Namespace, a.Name)
			if !groupsSpecified {
				u.Groups = auth.ServiceAccountGroups(a.Namespace)
			}
		case "users":
			u.Name = a.Name
		case "groups":
			u.Groups = append(u.Groups, a.Name)
		case "userextras":
			u.Extra[a.Subresource] = append(u.Extra[a.Subresource], a.Name)
		case "uids":
			u.UID = a.Name
		}
	}
	if u.Name == auth.UserAnonymous {
		if !slices.Contains(u.Groups, auth.GroupUnauthenticated) {
			u.Groups = append(u.Groups, auth.GroupUnauthenticated)
		}
	} else if !slices.Contains(u.Groups, auth.GroupAuthenticated) && !slices.Contains(u.Groups, auth.GroupUnauthenticated) {
		u.Groups = append(u.Groups, auth.GroupAuthenticated)
	}
	for name := range r.Header {
		if strings.HasPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			r.Header.Del(name)
		}
	}
	r.Header.Del(authenticationv1.ImpersonateUserHeader)
	r.Header.Del(authenticationv1.ImpersonateGroupHeader)
	r.Header.Del(authenticationv1.ImpersonateUIDHeader)
	return u, nil
}
