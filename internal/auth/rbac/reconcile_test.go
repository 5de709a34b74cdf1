package rbac_test

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"minik/internal/auth/rbac"
	"minik/internal/testserver"
)

// TestReconcile: the bootstrap reconciliation, run again on a live
// server, gives back what was taken from roles and bindings that allow it,
// keeps what was added, and leaves alone those annotated autoupdate=false,
// as kube-apiserver's bootstrap-roles hook does.
func TestReconcile(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	roles, bindings := cs.RbacV1().ClusterRoles(), cs.RbacV1().ClusterRoleBindings()
	extra := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}

	discovery, err := roles.Get(ctx, "system:discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := discovery.Rules
	discovery.Rules = []rbacv1.PolicyRule{extra}
	if _, err := roles.Update(ctx, discovery, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	basic, err := roles.Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	basic.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	basic.Rules = []rbacv1.PolicyRule{extra}
	if _, err := roles.Update(ctx, basic, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding, err := bindings.Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSubjects := len(binding.Subjects)
	binding.Subjects = binding.Subjects[:1]
	if _, err := bindings.Update(ctx, binding, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := rbac.Reconcile(ctx, cs); err != nil {
		t.Fatal(err)
	}
	t.Run("missing rules come back, added ones stay", func(t *testing.T) {
		got, err := roles.Get(ctx, "system:discovery", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ok, missing := validation.Covers(got.Rules, want); !ok {
			t.Errorf("still missing %v", missing)
		}
		if ok, _ := validation.Covers(got.Rules, []rbacv1.PolicyRule{extra}); !ok {
			t.Errorf("the added rule was removed: %v", got.Rules)
		}
	})
	t.Run("autoupdate=false is left alone", func(t *testing.T) {
		got, err := roles.Get(ctx, "system:basic-user", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rules) != 1 || got.Rules[0].Resources[0] != "configmaps" {
			t.Errorf("rules = %v", got.Rules)
		}
	})
	t.Run("missing subjects come back", func(t *testing.T) {
		got, err := bindings.Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Subjects) != wantSubjects {
			t.Errorf("subjects = %v", got.Subjects)
		}
	})
	t.Run("an add-on's roles get exactly their rules, unless autoupdate=false", func(t *testing.T) {
		addon := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "addon"}, Rules: []rbacv1.PolicyRule{extra}}
		if err := rbac.EnsureRoles(ctx, cs, []*rbacv1.ClusterRole{addon}, nil); err != nil {
			t.Fatal(err)
		}
		narrower := addon.DeepCopy()
		narrower.Rules[0].Resources = []string{"secrets"}
		if err := rbac.EnsureRoles(ctx, cs, []*rbacv1.ClusterRole{narrower}, nil); err != nil {
			t.Fatal(err)
		}
		got, err := roles.Get(ctx, "addon", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rules) != 1 || got.Rules[0].Resources[0] != "secrets" {
			t.Fatalf("rules = %v", got.Rules)
		}
		got.Annotations = map[string]string{rbacv1.AutoUpdateAnnotationKey: "false"}
		if _, err := roles.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := rbac.EnsureRoles(ctx, cs, []*rbacv1.ClusterRole{addon}, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := roles.Get(ctx, "addon", metav1.GetOptions{}); len(got.Rules) != 1 || got.Rules[0].Resources[0] != "secrets" {
			t.Fatalf("a protected role was rewritten: %v", got.Rules)
		}
	})
}
