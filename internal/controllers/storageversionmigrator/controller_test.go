package storageversionmigrator_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/storageversionmigrator"
	"minik/internal/testserver"
)

// timeout bounds each wait on a loaded machine.
const timeout = 60 * time.Second

func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// finished waits for a migration to end and returns it.
func finished(t *testing.T, cs kubernetes.Interface, name string) *svmv1.StorageVersionMigration {
	t.Helper()
	var m *svmv1.StorageVersionMigration
	waitFor(t, "migration "+name+" ends", func(ctx context.Context) (bool, error) {
		var err error
		m, err = cs.StoragemigrationV1().StorageVersionMigrations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return meta.IsStatusConditionFalse(m.Status.Conditions, string(svmv1.MigrationRunning)) ||
			meta.IsStatusConditionTrue(m.Status.Conditions, string(svmv1.MigrationFailed)), nil
	})
	return m
}

func condition(m *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) string {
	c := meta.FindStatusCondition(m.Status.Conditions, string(t))
	if c == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s %s %q", c.Status, c.Reason, c.Message)
}

func migration(name, group, resource string) *svmv1.StorageVersionMigration {
	return &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
}

func TestStorageVersionMigrator(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{storageversionmigrator.Name, "crd"}})
	cs := srv.Client(t)
	ctx := context.Background()
	svms := cs.StoragemigrationV1().StorageVersionMigrations()

	t.Run("every object of a built-in resource is written again", func(t *testing.T) {
		ns := "svm-configmaps"
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: ns}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svms.Create(ctx, migration("configmaps", "", "configmaps"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m := finished(t, cs, "configmaps")
		if got := condition(m, svmv1.MigrationSucceeded); got != `True StorageVersionMigrationSucceeded "Migration completed"` {
			t.Errorf("Succeeded = %s", got)
		}
		if got := condition(m, svmv1.MigrationRunning); got != `False MigrationCompleted "Migration completed"` {
			t.Errorf("Running = %s", got)
		}
		if m.Status.ResourceVersion == "" {
			t.Error("no status.resourceVersion recorded")
		}
	})

	t.Run("a resource that cannot be patched fails", func(t *testing.T) {
		if _, err := svms.Create(ctx, migration("tokenreviews", "authentication.k8s.io", "tokenreviews"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m := finished(t, cs, "tokenreviews")
		want := `True StorageVersionMigrationFailed "resource \"authentication.k8s.io/v1, Resource=tokenreviews\" does not support discovery operations: [update patch list]"`
		if got := condition(m, svmv1.MigrationFailed); got != want {
			t.Errorf("Failed = %s, want %s", got, want)
		}
	})

	t.Run("a custom resource is stored at its new storage version and the definition's stored versions shrink", func(t *testing.T) {
		ext := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig)
		schemaProps := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets.svm.example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "svm.example.com", Scope: apiextensionsv1.ClusterScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
					{Name: "v1", Served: true, Storage: true, Schema: schemaProps},
					{Name: "v2", Served: true, Storage: false, Schema: schemaProps},
				},
			},
		}
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "svm.example.com", Version: "v1", Resource: "widgets"}
		dc := dynamic.NewForConfigOrDie(srv.RESTConfig)
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "svm.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}, "size": int64(3)}}
		waitFor(t, "widget created", func(ctx context.Context) (bool, error) {
			_, err := dc.Resource(gvr).Create(ctx, w, metav1.CreateOptions{})
			return err == nil, nil
		})
		before, err := dc.Resource(gvr).Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The crd controller writes the definition's status meanwhile.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.Versions[0].Storage, cur.Spec.Versions[1].Storage = false, true
			_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svms.Create(ctx, migration("widgets", "svm.example.com", "widgets"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m := finished(t, cs, "widgets")
		if got := condition(m, svmv1.MigrationSucceeded); got != `True StorageVersionMigrationSucceeded "Migration completed"` {
			t.Fatalf("Succeeded = %s (Failed = %s)", got, condition(m, svmv1.MigrationFailed))
		}
		var after *unstructured.Unstructured
		waitFor(t, "widget readable", func(ctx context.Context) (bool, error) {
			var err error
			after, err = dc.Resource(gvr).Get(ctx, "w1", metav1.GetOptions{})
			if err != nil {
				t.Logf("get widget: %v", err)
			}
			return err == nil, nil
		})
		if after.GetResourceVersion() == before.GetResourceVersion() {
			t.Error("the widget was not written again at the new storage version")
		}
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Status.StoredVersions, []string{"v2"}) {
			t.Errorf("storedVersions = %v, want [v2]", got.Status.StoredVersions)
		}
		var migrating *apiextensionsv1.CustomResourceDefinitionCondition
		for i := range got.Status.Conditions {
			if got.Status.Conditions[i].Type == apiextensionsv1.StorageMigrating {
				migrating = &got.Status.Conditions[i]
			}
		}
		if migrating == nil || migrating.Status != apiextensionsv1.ConditionFalse || migrating.Reason != "MigrationSucceeded" ||
			migrating.Message != "The migration has succeeded and the stored versions have been updated" {
			t.Errorf("StorageMigrating condition = %+v", migrating)
		}
	})
}

func ptr[T any](v T) *T { return &v }
