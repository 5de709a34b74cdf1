package rbac

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
)

// EnsureRoles creates an add-on's ClusterRoles and ClusterRoleBindings
// through the API, as applying its manifest would: existing roles get
// exactly the rules given (component-helpers' reconciliation, removing
// extra permissions) unless annotated
// rbac.authorization.kubernetes.io/autoupdate=false; existing bindings are
// left alone.
func EnsureRoles(ctx context.Context, admin kubernetes.Interface, roles []*rbacv1.ClusterRole, bindings []*rbacv1.ClusterRoleBinding) error {
	for _, r := range roles {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			opts := reconciliation.ReconcileRoleOptions{
				Role:                   reconciliation.ClusterRoleRuleOwner{ClusterRole: r.DeepCopy()},
				Client:                 clusterRoles{ctx: ctx, client: admin.RbacV1().ClusterRoles()},
				Confirm:                true,
				RemoveExtraPermissions: true,
			}
			_, err := opts.Run()
			return err
		})
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
