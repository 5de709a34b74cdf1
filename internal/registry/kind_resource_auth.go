package registry

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/auth"
)

// The checks kube's resource.k8s.io strategies make with the namespace
// and the authorizer (pkg/registry/resource/utils.go), with v1.37's
// gates (DRAAdminAccess, DRAResourceClaimGranularStatusAuthorization and
// DRAResourceClaimDeviceStatus on). They need the client request
// (RequestFrom); the API server's own writes skip them.

// namespacesGR is core's namespaces.
var namespacesGR = coreV1.WithResource("namespaces").GroupResource()

// authorizedForAdmin is kube's AuthorizedForAdmin: a request for admin
// access to devices needs its namespace labelled
// resource.kubernetes.io/admin-access=true.
func authorizedForAdmin(ctx context.Context, requests []resourcev1.DeviceRequest, ns string) field.ErrorList {
	for i, r := range requests {
		if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return namespaceAllowsAdmin(ctx, ns, field.NewPath("spec", "devices", "requests").Index(i).Child("adminAccess"))
		}
	}
	return nil
}

// authorizedForAdminStatus is kube's AuthorizedForAdminStatus: a new
// allocation with admin access needs the namespace's label too.
func authorizedForAdminStatus(ctx context.Context, st, old *resourcev1.ResourceClaimStatus, ns string) field.ErrorList {
	if _, granted := adminResult(old); granted {
		return nil
	}
	if i, requested := adminResult(st); requested {
		return namespaceAllowsAdmin(ctx, ns, field.NewPath("status", "allocation", "devices", "results").Index(i).Child("adminAccess"))
	}
	return nil
}

func adminResult(st *resourcev1.ResourceClaimStatus) (int, bool) {
	if st.Allocation == nil {
		return 0, false
	}
	for i, r := range st.Allocation.Devices.Results {
		if r.AdminAccess != nil && *r.AdminAccess {
			return i, true
		}
	}
	return 0, false
}

func namespaceAllowsAdmin(ctx context.Context, ns string, p *field.Path) field.ErrorList {
	req, ok := RequestFrom(ctx)
	if !ok {
		return nil
	}
	store := req.Env.Store(namespacesGR)
	if store == nil {
		return field.ErrorList{field.InternalError(p, errors.New("could not retrieve namespace to verify admin access: namespaces are not served"))}
	}
	obj, err := store.Get(ctx, "", ns)
	if err != nil {
		return field.ErrorList{field.InternalError(p, fmt.Errorf("could not retrieve namespace to verify admin access: %w", err))}
	}
	if n, ok := obj.(*corev1.Namespace); !ok || n.Labels[resourcev1.DRAAdminNamespaceLabelKey] != "true" {
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace", resourcev1.DRAAdminNamespaceLabelKey))}
	}
	return nil
}

// authorizedForBinding is kube's AuthorizedForBinding: changing a claim's
// allocation or reservations needs the verb on resourceclaims/binding at
// the cluster scope, as the scheduler and the resourceclaim controller
// have it.
func authorizedForBinding(ctx context.Context, st, old *resourcev1.ResourceClaimStatus) field.ErrorList {
	if apiequality.Semantic.DeepEqual(st.Allocation, old.Allocation) && apiequality.Semantic.DeepEqual(st.ReservedFor, old.ReservedFor) {
		return nil
	}
	req, ok := RequestFrom(ctx)
	if !ok {
		return nil
	}
	p := field.NewPath("status", "allocation")
	if err := authorizeClaimSubresource(ctx, req, req.Verb, resourcev1.SubresourceBinding, "", ""); err != nil {
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf(`changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", verb="%s" permission: %s`, req.Verb, err))}
	}
	return nil
}

// authorizedForDeviceStatus is kube's AuthorizedForDeviceStatus: each
// driver whose entries of status.devices change needs
// arbitrary-node:<verb> on resourceclaims/driver named after it, or
// associated-node:<verb> for a service account of the node the claim is
// allocated on.
func authorizedForDeviceStatus(ctx context.Context, st, old *resourcev1.ResourceClaimStatus, ns string) field.ErrorList {
	drivers := modifiedDrivers(st, old)
	if len(drivers) == 0 {
		return nil
	}
	req, ok := RequestFrom(ctx)
	if !ok {
		return nil
	}
	verbs := []string{resourcev1.VerbPrefixArbitraryNode + req.Verb}
	if saOnNode(auth.UserFrom(ctx), allocatedNode(st.Allocation)) {
		verbs = []string{resourcev1.VerbPrefixAssociatedNode + req.Verb, resourcev1.VerbPrefixArbitraryNode + req.Verb}
	}
	var errs field.ErrorList
	for _, driver := range sets.List(drivers) {
		var first error
		for _, verb := range verbs {
			err := authorizeClaimSubresource(ctx, req, verb, resourcev1.SubresourceDriver, ns, driver)
			if err == nil {
				first = nil
				break
			}
			if first == nil {
				first = err
			}
		}
		if first != nil {
			errs = append(errs, field.Forbidden(field.NewPath("status", "devices"), fmt.Sprintf(`changing status.devices requires resource="resourceclaims/driver", verb="%s" permission: %s`, verbs, first)))
		}
	}
	return errs
}

// modifiedDrivers are the drivers whose status entries were added,
// removed or changed.
func modifiedDrivers(st, old *resourcev1.ResourceClaimStatus) sets.Set[string] {
	drivers := sets.New[string]()
	before := map[deviceKey]resourcev1.AllocatedDeviceStatus{}
	for _, d := range old.Devices {
		before[statusKey(&d)] = d
	}
	for _, d := range st.Devices {
		k := statusKey(&d)
		o, ok := before[k]
		delete(before, k)
		if !ok || !apiequality.Semantic.DeepEqual(o, d) {
			drivers.Insert(d.Driver)
		}
	}
	for _, d := range before {
		drivers.Insert(d.Driver)
	}
	return drivers
}

// allocatedNode is the node an allocation's node selector names by
// metadata.name alone, or "".
func allocatedNode(a *resourcev1.AllocationResult) string {
	if a == nil || a.NodeSelector == nil || len(a.NodeSelector.NodeSelectorTerms) != 1 {
		return ""
	}
	t := a.NodeSelector.NodeSelectorTerms[0]
	if len(t.MatchExpressions) != 0 || len(t.MatchFields) != 1 {
		return ""
	}
	f := t.MatchFields[0]
	if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || len(f.Values) != 1 {
		return ""
	}
	return f.Values[0]
}

// saOnNode tells whether u is a service account whose token names node.
func saOnNode(u *auth.User, node string) bool {
	if u == nil || node == "" || !isServiceAccountUser(u.Name) {
		return false
	}
	names := u.Extra[auth.ExtraNodeName]
	return len(names) == 1 && len(validateName(names[0], nameIsDNSSubdomain, false, nil)) == 0 && names[0] == node
}

// authorizeClaimSubresource asks the authorizer about the request with a
// synthetic subresource of resourceclaims, answering kube's Forbidden
// error when it is not allowed.
func authorizeClaimSubresource(ctx context.Context, req Request, verb, sub, ns, name string) error {
	a := auth.Attributes{
		User: auth.UserFrom(ctx), Verb: verb, IsResource: true,
		APIGroup: resourceV1.Group, APIVersion: resourceV1.Version, Resource: "resourceclaims", Subresource: sub,
		Namespace: ns, Name: name,
	}
	d, reason, err := req.Env.Authorizer().Authorize(ctx, a)
	if d == auth.Allow {
		return nil
	}
	msg := reason
	switch {
	case err != nil && reason != "":
		msg = fmt.Sprintf("%v: %s", err, reason)
	case err != nil:
		msg = err.Error()
	}
	full := auth.ForbiddenMessage(a)
	if msg != "" {
		full += ": " + msg
	}
	return apierrors.NewForbidden(resourceClaimsGR, name, errors.New(full))
}

func isServiceAccountUser(name string) bool {
	_, _, ok := auth.SplitServiceAccountUser(name)
	return ok
}
