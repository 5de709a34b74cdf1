package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"minik/internal/testserver"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// widgetCRD is a namespaced definition with a schema (replicas an
// integer, color defaulted, an object that keeps unknown fields), the
// status and scale subresources and printer columns.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	props := map[string]apiextensionsv1.JSONSchemaProps{
		"replicas": {Type: "integer"},
		"color":    {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}},
		"extra":    {Type: "object", XPreserveUnknownFields: ptr.To(true)},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ShortNames: []string{"wd"}, Categories: []string{"all"}},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Properties: props},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
				},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
					{Name: "Color", Type: "string", JSONPath: ".spec.color"},
				},
			}},
		},
	}
}

func widget(name string, spec map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]interface{}{"name": name},
		"spec":     spec,
	}}
}

// establish creates a definition and waits until its resource is served.
func establish(t *testing.T, cfg *rest.Config, crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	ctx := context.Background()
	xc := apiextensionsclient.NewForConfigOrDie(cfg)
	if _, err := xc.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *apiextensionsv1.CustomResourceDefinition
	waitFor(t, "the definition to be established", func() bool {
		var err error
		got, err = xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	})
	return got
}

func TestCustomResourceDefinitionIsEstablishedAndDiscovered(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	crd := establish(t, srv.RESTConfig, widgetCRD())

	conds := map[apiextensionsv1.CustomResourceDefinitionConditionType]string{}
	for _, c := range crd.Status.Conditions {
		conds[c.Type] = string(c.Status) + "/" + c.Reason
	}
	if conds[apiextensionsv1.NamesAccepted] != "True/NoConflicts" || conds[apiextensionsv1.Established] != "True/InitialNamesAccepted" {
		t.Errorf("conditions = %v", conds)
	}
	if crd.Status.AcceptedNames.Kind != "Widget" || crd.Status.AcceptedNames.ListKind != "WidgetList" || len(crd.Status.StoredVersions) != 1 {
		t.Errorf("status = %+v", crd.Status)
	}

	cs := srv.Client(t)
	waitFor(t, "discovery to list widgets", func() bool {
		list, err := cs.Discovery().ServerResourcesForGroupVersion("example.com/v1")
		if err != nil {
			return false
		}
		names := map[string]bool{}
		for _, r := range list.APIResources {
			names[r.Name] = true
			if r.Name == "widgets" && (r.Kind != "Widget" || !r.Namespaced || strings.Join(r.ShortNames, ",") != "wd") {
				t.Errorf("widgets discovered as %+v", r)
			}
		}
		return names["widgets"] && names["widgets/status"] && names["widgets/scale"]
	})
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/apis").SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").Do(context.Background()).Raw()
	if err != nil || !strings.Contains(string(body), `"name":"example.com"`) || !strings.Contains(string(body), `"resource":"widgets"`) {
		t.Errorf("aggregated discovery lacks example.com/widgets (err %v)", err)
	}

	t.Run("a definition that breaks kube's rules is refused with its messages", func(t *testing.T) {
		bad := widgetCRD()
		bad.Name = "gadgets.example.com"
		bad.Spec.Versions[0].Storage = false
		_, err := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig).ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid`) ||
			!strings.Contains(err.Error(), "must have exactly one version marked as storage version") ||
			!strings.Contains(err.Error(), `metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group`) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestCustomResources(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	establish(t, srv.RESTConfig, widgetCRD())
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "ws")
	dc := dynamic.NewForConfigOrDie(srv.RESTConfig)
	widgets := dc.Resource(widgetsGVR).Namespace("ws")

	w, err := widgets.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	t.Run("create prunes unknown fields and defaults from the schema", func(t *testing.T) {
		obj := widget("a", map[string]interface{}{"replicas": int64(2), "unknown": "x", "extra": map[string]interface{}{"kept": "y"}})
		obj.Object["status"] = map[string]interface{}{"replicas": int64(9)}
		got, err := widgets.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := got.Object["spec"].(map[string]interface{})
		if _, ok := spec["unknown"]; ok {
			t.Errorf("spec.unknown not pruned: %v", spec)
		}
		if spec["color"] != "blue" || spec["extra"].(map[string]interface{})["kept"] != "y" {
			t.Errorf("spec = %v", spec)
		}
		if _, ok := got.Object["status"]; ok {
			t.Errorf("status kept on create: %v", got.Object["status"])
		}
		if got.GetGeneration() != 1 || got.GetUID() == "" || got.GetResourceVersion() == "" {
			t.Errorf("metadata = %v", got.Object["metadata"])
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "a" {
				t.Errorf("event %s %v", ev.Type, ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Error("no ADDED event")
		}
	})

	t.Run("schema violations are refused with kube's message", func(t *testing.T) {
		_, err := widgets.Create(ctx, widget("b", map[string]interface{}{"replicas": "string"}), metav1.CreateOptions{})
		want := `Widget.example.com "b" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		_, err = widgets.Create(ctx, widget("B_", map[string]interface{}{}), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `metadata.name: Invalid value: "B_"`) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("unknown fields are rejected when fieldValidation is Strict", func(t *testing.T) {
		_, err := widgets.Create(ctx, widget("c", map[string]interface{}{"bogus": int64(1)}), metav1.CreateOptions{FieldValidation: "Strict"})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `strict decoding error: unknown field "spec.bogus"`) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("spec changes bump generation and status writes keep the spec", func(t *testing.T) {
		got, err := widgets.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetGeneration() != 2 {
			t.Errorf("generation = %d", got.GetGeneration())
		}
		got.Object["status"] = map[string]interface{}{"replicas": int64(3)}
		got.Object["spec"].(map[string]interface{})["replicas"] = int64(7)
		st, err := widgets.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(st.Object, "spec", "replicas"); r != 3 {
			t.Errorf("status write changed spec.replicas to %d", r)
		}
		if r, _, _ := unstructured.NestedInt64(st.Object, "status", "replicas"); r != 3 || st.GetGeneration() != 2 {
			t.Errorf("status = %v generation %d", st.Object["status"], st.GetGeneration())
		}
		st.Object["status"] = map[string]interface{}{"replicas": int64(1)}
		up, err := widgets.Update(ctx, st, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(up.Object, "status", "replicas"); r != 3 {
			t.Errorf("main resource write changed status.replicas to %d", r)
		}
		sc, err := widgets.Get(ctx, "a", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas"); r != 3 || sc.GetKind() != "Scale" {
			t.Errorf("scale = %v", sc.Object)
		}
	})

	t.Run("strategic merge patches and protobuf are not served", func(t *testing.T) {
		_, err := widgets.Patch(ctx, "a", types.StrategicMergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
		if se, ok := err.(apierrors.APIStatus); !ok || se.Status().Code != http.StatusUnsupportedMediaType {
			t.Errorf("err = %v", err)
		}
		res := cs.Discovery().RESTClient().Get().AbsPath("/apis/example.com/v1/namespaces/ws/widgets/a").SetHeader("Accept", "application/vnd.kubernetes.protobuf").Do(ctx)
		var code int
		res.StatusCode(&code)
		if code != http.StatusNotAcceptable {
			t.Errorf("protobuf GET answered %d", code)
		}
	})

	t.Run("tables show the printer columns", func(t *testing.T) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/example.com/v1/namespaces/ws/widgets").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var table metav1.Table
		if err := json.Unmarshal(body, &table); err != nil {
			t.Fatal(err)
		}
		var cols []string
		for _, c := range table.ColumnDefinitions {
			cols = append(cols, c.Name)
		}
		if strings.Join(cols, ",") != "Name,Replicas,Color" || len(table.Rows) != 1 {
			t.Fatalf("columns %v, rows %v", cols, table.Rows)
		}
		if cells := table.Rows[0].Cells; cells[0] != "a" || cells[1] != float64(3) || cells[2] != "blue" {
			t.Errorf("cells = %v", cells)
		}
	})

	t.Run("field selectors on name work", func(t *testing.T) {
		if _, err := widgets.Create(ctx, widget("d", map[string]interface{}{}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := widgets.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=d"})
		if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "d" || list.GetKind() != "WidgetList" {
			t.Errorf("list = %v, err %v", list, err)
		}
	})

	t.Run("deleting the definition deletes its resources and stops serving them", func(t *testing.T) {
		xc := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig)
		if err := xc.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "widgets.example.com", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the definition to go", func() bool {
			_, err := xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.example.com", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		// The server stops serving the resource once its watch of the
		// definitions sees the deletion.
		waitFor(t, "the resource no longer served", func() bool {
			_, err := widgets.List(ctx, metav1.ListOptions{})
			return apierrors.IsNotFound(err)
		})
		kvs, err := srv.Etcd.Get(ctx, "/registry/example.com/widgets/", clientv3.WithPrefix())
		if err != nil || len(kvs.Kvs) != 0 {
			t.Errorf("objects left in etcd: %v (err %v)", kvs, err)
		}
	})
}
