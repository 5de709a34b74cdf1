package tables

import (
	"fmt"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tables of rbac.authorization.k8s.io bindings. Role and ClusterRole have
// no printer in kube-apiserver and use CreatedAt.

// bindingColumns are the columns of RoleBinding ("roleBinding") and
// ClusterRoleBinding ("clusterRoleBinding").
func bindingColumns(roleRefDescription, what string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		col("Role", "string", roleRefDescription),
		ageColumn(),
		wide("Users", "string", "Users in the "+what),
		wide("Groups", "string", "Groups in the "+what),
		wide("ServiceAccounts", "string", "ServiceAccounts in the "+what),
	}
}

// RoleBinding is kubectl's table of rbac RoleBindings.
var RoleBinding = kindTable(
	bindingColumns(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding"),
	func(b *rbacv1.RoleBinding, now time.Time) []interface{} {
		return bindingCells(b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp, now)
	},
)

// ClusterRoleBinding is kubectl's table of rbac ClusterRoleBindings.
var ClusterRoleBinding = kindTable(
	bindingColumns(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding"),
	func(b *rbacv1.ClusterRoleBinding, now time.Time) []interface{} {
		return bindingCells(b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp, now)
	},
)

// bindingCells renders a binding's row: ROLE is "Kind/name"; USERS, GROUPS
// and SERVICEACCOUNTS ("namespace/name") list the subjects of each kind,
// joined by ", ". Subjects of other kinds are not shown.
func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []interface{} {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []interface{}{
		name,
		fmt.Sprintf("%s/%s", ref.Kind, ref.Name),
		age(created, now),
		strings.Join(users, ", "),
		strings.Join(groups, ", "),
		strings.Join(sas, ", "),
	}
}
