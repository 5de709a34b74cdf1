package dataplane

import (
	"context"

	"minik/internal/auth/rbac"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// GroupDataPlane is the group of the data plane's identities. Until the
// API server authorizes with RBAC its stand-in authorizer allows the
// system:nodes group, so the data plane's certificates carry it; under
// RBAC the group grants nothing and the roles of EnsureRBAC do.
const GroupDataPlane = "system:nodes"

// Roles returns the least-privilege ClusterRoles of the data plane's
// identities and their bindings, as an add-on's manifest would ship them.
func Roles() ([]*rbacv1.ClusterRole, []*rbacv1.ClusterRoleBinding) {
	read := []string{"get", "list", "watch"}
	events := rbacv1.PolicyRule{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}}
	proxy := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:minik:service-proxy"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services", "nodes"}, Verbs: read},
			// The network plugin's policy engine (internal/netpol), which
			// runs as this identity, reads pods, namespaces and policies.
			{APIGroups: []string{""}, Resources: []string{"pods", "namespaces"}, Verbs: read},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: read},
			// The LoadBalancer controller writes Services' status.
			{APIGroups: []string{""}, Resources: []string{"services/status"}, Verbs: []string{"update", "patch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: read},
			events,
		},
	}
	ingress := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:minik:ingress-controller"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services", "secrets", "namespaces"}, Verbs: read},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: read},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "ingressclasses"}, Verbs: read},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingressclasses"}, Verbs: []string{"create"}},
			{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gatewayclasses"}, Verbs: []string{"create"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"update", "patch"}},
			{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"}, Verbs: read},
			{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gatewayclasses/status", "gateways/status", "httproutes/status"}, Verbs: []string{"update", "patch"}},
			// The Gateway API is served from CRDs: the controller waits for them.
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: read},
			events,
		},
	}
	bind := func(role *rbacv1.ClusterRole, user string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
	}
	return []*rbacv1.ClusterRole{proxy, ingress},
		[]*rbacv1.ClusterRoleBinding{bind(proxy, UserServiceProxy), bind(ingress, UserIngressController)}
}

// EnsureRBAC creates the data plane's roles and bindings with an
// administrator's client, and brings the rules of existing roles up to
// date unless they are annotated rbac.authorization.kubernetes.io/autoupdate=false.
func EnsureRBAC(ctx context.Context, admin kubernetes.Interface) error {
	roles, bindings := Roles()
	return rbac.EnsureRoles(ctx, admin, roles, bindings)
}
