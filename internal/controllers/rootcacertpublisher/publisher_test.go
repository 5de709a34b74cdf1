package rootcacertpublisher_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/rootcacertpublisher"
	"minik/internal/testserver"
)

func TestEveryNamespaceHasTheRootCA(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{rootcacertpublisher.Name}})
	ctx := context.Background()
	cs := srv.Client(t)
	ca := string(srv.RESTConfig.CAData)
	if ca == "" {
		t.Fatal("the admin kubeconfig has no CA data")
	}
	published := func(ns string) func() bool {
		return func() bool {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
			return err == nil && len(cm.Data) == 1 && cm.Data["ca.crt"] == ca &&
				cm.Annotations["kubernetes.io/description"] == rootcacertpublisher.Description
		}
	}
	t.Run("the system namespaces have it", func(t *testing.T) {
		for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			ctrltest.Wait(t, "the root CA in "+ns, published(ns))
		}
	})
	t.Run("a new namespace gets it", func(t *testing.T) {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the root CA in demo", published("demo"))
	})
	t.Run("a deleted one comes back", func(t *testing.T) {
		if err := cs.CoreV1().ConfigMaps("demo").Delete(ctx, rootcacertpublisher.ConfigMapName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the root CA in demo again", published("demo"))
	})
	t.Run("changed data is put back and the user's labels stay", func(t *testing.T) {
		tamper(ctx, t, cs, "demo", func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"ca.crt": "not a certificate", "extra": "x"}
			cm.Labels = map[string]string{"team": "a"}
		})
		ctrltest.Wait(t, "the root CA in demo restored", func() bool {
			cm, err := cs.CoreV1().ConfigMaps("demo").Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
			return err == nil && published("demo")() && cm.Labels["team"] == "a"
		})
	})
	t.Run("a removed description is put back", func(t *testing.T) {
		tamper(ctx, t, cs, "demo", func(cm *corev1.ConfigMap) { cm.Annotations = nil })
		ctrltest.Wait(t, "the description in demo restored", published("demo"))
	})
}

// tamper changes namespace's kube-root-ca.crt with change, as a user would.
func tamper(ctx context.Context, t *testing.T, cs kubernetes.Interface, namespace string, change func(*corev1.ConfigMap)) {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(cm)
	if _, err := cs.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
