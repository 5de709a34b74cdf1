package namespace_test

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/garbagecollector"
	"minik/internal/controllers/namespace"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

func start(t testing.TB) (kubernetes.Interface, context.Context) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{namespace.Name, garbagecollector.Name, replicaset.Name}})
	return srv.Client(t), t.Context()
}

func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func namespaceGone(ctx context.Context, t testing.TB, cs kubernetes.Interface, name string) bool {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

func TestNamespaceDeletionRemovesContent(t *testing.T) {
	cs, ctx := start(t)
	const ns = "shop"
	createNamespace(ctx, t, cs, ns)
	labels := map[string]string{"app": "web"}
	three := int32(3)
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "3 pods", func() bool {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 3
	})

	started := time.Now()
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the namespace removed", func() bool { return namespaceGone(ctx, t, cs, ns) })
	t.Logf("namespace with 3 pods, a ReplicaSet, a ConfigMap, a Secret and a Role removed in %v", time.Since(started).Round(time.Millisecond))

	t.Run("nothing of it is left", func(t *testing.T) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) != 0 {
			t.Errorf("pods left: %v, %v", pods, err)
		}
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(rss.Items) != 0 {
			t.Errorf("replicasets left: %v, %v", rss, err)
		}
		cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(cms.Items) != 0 {
			t.Errorf("configmaps left: %v, %v", cms, err)
		}
		secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(secrets.Items) != 0 {
			t.Errorf("secrets left: %v, %v", secrets, err)
		}
		roles, err := cs.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(roles.Items) != 0 {
			t.Errorf("roles left: %v, %v", roles, err)
		}
	})

	t.Run("a namespace of the same name can be created again, empty", func(t *testing.T) {
		createNamespace(ctx, t, cs, ns)
		cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(cms.Items) != 0 {
			t.Errorf("configmaps in the new namespace: %v, %v", cms, err)
		}
	})
}

func condition(ns *corev1.Namespace, t corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range ns.Status.Conditions {
		if ns.Status.Conditions[i].Type == t {
			return &ns.Status.Conditions[i]
		}
	}
	return nil
}

func TestNamespaceWaitsForFinalizedContent(t *testing.T) {
	cs, ctx := start(t)
	const ns = "held"
	createNamespace(ctx, t, cs, ns)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "guarded", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("while content holds, the namespace stays Terminating and says why", func(t *testing.T) {
		var got *corev1.Namespace
		ctrltest.Wait(t, "a NamespaceFinalizersRemaining condition", func() bool {
			n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got = n
			c := condition(n, corev1.NamespaceFinalizersRemaining)
			return c != nil && c.Status == corev1.ConditionTrue
		})
		if got.Status.Phase != corev1.NamespaceTerminating || !slices.Contains(got.Spec.Finalizers, corev1.FinalizerKubernetes) {
			t.Errorf("phase %s, finalizers %v: want Terminating, still with kubernetes", got.Status.Phase, got.Spec.Finalizers)
		}
		want := map[corev1.NamespaceConditionType][2]string{
			corev1.NamespaceFinalizersRemaining:      {"SomeFinalizersRemain", "Some finalizers are remaining: example.com/hold in 1 resource instances"},
			corev1.NamespaceContentRemaining:         {"SomeResourcesRemain", "Some resources are remaining: configmaps. has 1 resource instances"},
			corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
			corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
		}
		for typ, w := range want {
			c := condition(got, typ)
			if c == nil || c.Reason != w[0] || c.Message != w[1] {
				t.Errorf("condition %s = %+v, want reason %q, message %q", typ, c, w[0], w[1])
			}
		}
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "guarded", metav1.GetOptions{})
		if err != nil || cm.DeletionTimestamp == nil {
			t.Errorf("the guarded configmap should be marked for deletion: %v, %v", cm, err)
		}
	})

	t.Run("once the last finalizer is gone, so is the namespace", func(t *testing.T) {
		if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "guarded", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		// The controller looks again at the latest after half the 15s it
		// expects finalizers to take.
		ctrltest.Wait(t, "the namespace removed", func() bool { return namespaceGone(ctx, t, cs, ns) })
	})
}

func TestNamespaceWithAnotherFinalizerStays(t *testing.T) {
	cs, ctx := start(t)
	const ns = "guarded"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/audit"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Namespace
	ctrltest.Wait(t, "the kubernetes finalizer removed", func() bool {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = n
		return !slices.Contains(n.Spec.Finalizers, corev1.FinalizerKubernetes)
	})
	if !slices.Equal(got.Spec.Finalizers, []corev1.FinalizerName{"example.com/audit"}) {
		t.Errorf("finalizers %v, want only example.com/audit", got.Spec.Finalizers)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Finalizers = nil
		_, err = cs.CoreV1().Namespaces().Finalize(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the namespace removed", func() bool { return namespaceGone(ctx, t, cs, ns) })
}
