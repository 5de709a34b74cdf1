package rbac

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// annotationAutoupdate set to "false" on a ClusterRole keeps EnsureRoles
// from rewriting its rules, as kube's reconciliation honours it.
const annotationAutoupdate = "rbac.authorization.kubernetes.io/autoupdate"

// EnsureRoles creates an add-on's ClusterRoles and ClusterRoleBindings
// through the API, as applying its manifest would: existing roles get
// the rules given unless annotated autoupdate=false; existing bindings
// are left alone.
func EnsureRoles(ctx context.Context, admin kubernetes.Interface, roles []*rbacv1.ClusterRole, bindings []*rbacv1.ClusterRoleBinding) error {
	for _, r := range roles {
		_, err := admin.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := admin.RbacV1().ClusterRoles().Get(ctx, r.Name, metav1.GetOptions{})
				if err != nil || cur.Annotations[annotationAutoupdate] == "false" || equality.Semantic.DeepEqual(cur.Rules, r.Rules) {
					return err
				}
				cur.Rules = r.Rules
				_, err = admin.RbacV1().ClusterRoles().Update(ctx, cur, metav1.UpdateOptions{})
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("ensure clusterrole %s: %w", r.Name, err)
		}
	}
	for _, b := range bindings {
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create clusterrolebinding %s: %w", b.Name, err)
		}
	}
	return nil
}
