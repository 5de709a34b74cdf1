package serviceaccount_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/serviceaccount"
	"minik/internal/testserver"
)

func TestEveryNamespaceHasADefaultServiceAccount(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{serviceaccount.Name}})
	ctx := context.Background()
	cs := srv.Client(t)
	has := func(ns string) func() bool {
		return func() bool {
			_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, serviceaccount.DefaultName, metav1.GetOptions{})
			return err == nil
		}
	}
	t.Run("the system namespaces have one", func(t *testing.T) {
		for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			ctrltest.Wait(t, "the default service account of "+ns, has(ns))
		}
	})
	t.Run("a new namespace gets one", func(t *testing.T) {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the default service account of demo", has("demo"))
	})
	t.Run("a deleted one comes back", func(t *testing.T) {
		if err := cs.CoreV1().ServiceAccounts("demo").Delete(ctx, serviceaccount.DefaultName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the default service account of demo again", has("demo"))
	})
}
