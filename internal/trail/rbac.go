package trail

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minik/internal/auth/rbac"
)

// ReaderRole is the ClusterRole that lets view, edit and admin read the
// trail of their namespaces.
const ReaderRole = "minik:trail-reader"

// Roles is the ClusterRole aggregated into view, edit and admin: get, list
// and watch of records (the trail is read-only to everyone: no role can
// write it, the API server answers no write).
func Roles() []*rbacv1.ClusterRole {
	return []*rbacv1.ClusterRole{{
		ObjectMeta: metav1.ObjectMeta{Name: ReaderRole, Labels: map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
			"rbac.authorization.k8s.io/aggregate-to-view":  "true",
		}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{GroupVersion.Group}, Resources: []string{Resource}, Verbs: []string{"get", "list", "watch"}}},
	}}
}

// EnsureRBAC creates Roles with an administrator's client, and brings an
// existing role's rules up to date unless annotated
// rbac.authorization.kubernetes.io/autoupdate=false.
func EnsureRBAC(ctx context.Context, admin kubernetes.Interface) error {
	return rbac.EnsureRoles(ctx, admin, Roles(), nil)
}
