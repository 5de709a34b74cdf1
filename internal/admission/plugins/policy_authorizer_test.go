package plugins_test

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// TestPolicyAuthorizerAsksRBAC: a ValidatingAdmissionPolicy's authorizer
// check is answered by the server's own RBAC, for the requesting user.
func TestPolicyAuthorizerAsksRBAC(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)
	createNamespace(ctx, t, admin, "demo")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "config-writer", Namespace: "demo"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
	}}
	reader := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader", Namespace: "demo"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}}
	for _, r := range []*rbacv1.Role{role, reader} {
		if _, err := admin.RbacV1().Roles("demo").Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(name, roleName string, users ...string) {
		b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName}}
		for _, u := range users {
			b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
		}
		if _, err := admin.RbacV1().RoleBindings("demo").Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind("writers", "config-writer", "alice", "bob")
	bind("readers", "secret-reader", "alice")

	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "secret-refs"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		}}}},
		Validations: []admissionregistrationv1.Validation{{
			Expression:        "!has(object.data) || !('secret' in object.data) || authorizer.group('').resource('secrets').namespace(object.metadata.namespace).name(object.data.secret).check('get').allowed()",
			MessageExpression: "'user ' + request.userInfo.username + ' may not refer to secret ' + object.data.secret",
		}},
	}}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "secret-refs"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName: "secret-refs", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
	}}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := func(user string) kubernetes.Interface {
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"secret": "db"}}
	}
	want := `configmaps "bob-1" is forbidden: ValidatingAdmissionPolicy 'secret-refs' with binding 'secret-refs' denied request: user bob may not refer to secret db`
	n := 0
	ctrltest.Wait(t, "the policy in the admission caches", func() bool {
		n++
		_, err := as("bob").CoreV1().ConfigMaps("demo").Create(ctx, cm(fmt.Sprintf("bob-%d", n)), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil
	})
	t.Run("a user without the permission is refused with kube's message", func(t *testing.T) {
		_, err := as("bob").CoreV1().ConfigMaps("demo").Create(ctx, cm("bob-1"), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a user holding it is admitted", func(t *testing.T) {
		if _, err := as("alice").CoreV1().ConfigMaps("demo").Create(ctx, cm("alice-1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}
