package api_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/pki"
	"minik/internal/testserver"
)

func TestHandlerChain(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)

	t.Run("a user who is not an admin is forbidden with kube's message", func(t *testing.T) {
		ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
		if err != nil {
			t.Fatal(err)
		}
		kp, err := ca.SignClient("viewer", []string{"viewers"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.CertData, cfg.KeyData = kp.CertPEM, kp.KeyPEM
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
		want := `pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "demo"`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("an unknown client is unauthorized", func(t *testing.T) {
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.CertData, cfg.KeyData = nil, nil
		cs, _ := kubernetes.NewForConfig(cfg)
		_, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a terminating namespace refuses new objects", func(t *testing.T) {
		namespace(t, admin, "going")
		if err := admin.CoreV1().Namespaces().Delete(ctx, "going", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ns, err := admin.CoreV1().Namespaces().Get(ctx, "going", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
			t.Fatalf("namespace after delete: phase %q deletionTimestamp %v", ns.Status.Phase, ns.DeletionTimestamp)
		}
		_, err = admin.CoreV1().ConfigMaps("going").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
		want := `configmaps "x" is forbidden: unable to create new content in namespace going because it is being terminated`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("the system namespaces may not be deleted", func(t *testing.T) {
		err := admin.CoreV1().Namespaces().Delete(ctx, "kube-system", metav1.DeleteOptions{})
		if !apierrors.IsForbidden(err) || err.Error() != `namespaces "kube-system" is forbidden: this namespace may not be deleted` {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("an object with finalizers is marked, then removed with its last finalizer", func(t *testing.T) {
		cms := admin.CoreV1().ConfigMaps("default")
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cm, err := cms.Get(ctx, "held", metav1.GetOptions{})
		if err != nil || cm.DeletionTimestamp == nil {
			t.Fatalf("after delete: %v %v", cm, err)
		}
		cm.Finalizers = nil
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Get(ctx, "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("after the last finalizer: %v", err)
		}
	})
}

func TestServerSideTable(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "demo")
	if _, err := cs.AppsV1().Deployments("demo").Create(ctx, deployment("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, err := cs.AppsV1().RESTClient().Get().Namespace("demo").Resource("deployments").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got := strings.Join(cols, ","); got != "Name,Ready,Up-to-date,Available,Age,Containers,Images,Selector" {
		t.Fatalf("columns %s", got)
	}
	if table.Kind != "Table" || len(table.Rows) != 1 || table.Rows[0].Cells[0] != "web" || table.Rows[0].Cells[1] != "0/3" {
		t.Fatalf("table %s", raw)
	}
	var pom metav1.PartialObjectMetadata
	if err := json.Unmarshal(table.Rows[0].Object.Raw, &pom); err != nil || pom.Namespace != "demo" || pom.Kind != "PartialObjectMetadata" {
		t.Fatalf("row object %s (%v)", table.Rows[0].Object.Raw, err)
	}
}
