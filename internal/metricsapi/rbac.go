package metricsapi

import (
	"context"

	"minik/internal/auth/rbac"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Roles are the ClusterRoles and the binding of metrics-server's manifest:
// system:metrics-server (what the provider reads) bound to User, and
// system:aggregated-metrics-reader, aggregated into view, edit and admin.
func Roles() ([]*rbacv1.ClusterRole, []*rbacv1.ClusterRoleBinding) {
	read := []string{"get", "list", "watch"}
	server := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:metrics-server", Labels: map[string]string{"k8s-app": "metrics-server"}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: read},
		},
	}
	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:aggregated-metrics-reader", Labels: map[string]string{
			"k8s-app": "metrics-server",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
			"rbac.authorization.k8s.io/aggregate-to-view":  "true",
		}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{GroupVersion.Group}, Resources: []string{"pods", "nodes"}, Verbs: read}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: server.Name, Labels: map[string]string{"k8s-app": "metrics-server"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: server.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: User}},
	}
	return []*rbacv1.ClusterRole{server, reader}, []*rbacv1.ClusterRoleBinding{binding}
}

// EnsureRBAC creates Roles with an administrator's client, as applying
// metrics-server's manifest would, and brings existing roles' rules up to
// date unless annotated rbac.authorization.kubernetes.io/autoupdate=false.
func EnsureRBAC(ctx context.Context, admin kubernetes.Interface) error {
	roles, bindings := Roles()
	return rbac.EnsureRoles(ctx, admin, roles, bindings)
}
