package openapi

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/registry"
)

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.minik.test", UID: "widget-uid", Generation: 1, ResourceVersion: "10"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "minik.test", Names: names, Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}},
			}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names},
	}
}

func customResources(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) []*registry.CustomResource {
	t.Helper()
	crs, err := registry.CustomResources(crd)
	if err != nil {
		t.Fatal(err)
	}
	return crs
}

func TestSetCustomResourcesRebuildsOnlyOnChange(t *testing.T) {
	// Documents are built on request only: a bare handler will do.
	h := &Handler{builtinGVs: map[string]bool{}}
	h.current.Store(h.newDocuments(nil, ""))

	crd := widgetCRD()
	h.SetCustomResources(customResources(t, crd))
	first := h.current.Load()

	status := crd.DeepCopy()
	status.ResourceVersion = "11"
	status.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	h.SetCustomResources(customResources(t, status))
	if h.current.Load() != first {
		t.Error("a status change rebuilt the documents")
	}

	changed := status.DeepCopy()
	changed.Generation = 2
	h.SetCustomResources(customResources(t, changed))
	if h.current.Load() == first {
		t.Error("a spec change kept the documents")
	}
}

func TestCustomResourceRoutesOfAClusterScopedKind(t *testing.T) {
	cr := customResources(t, widgetCRD())[0]
	var got []string
	for _, r := range customResourceRoutes(cr) {
		for _, o := range r.ops {
			got = append(got, o.method+" "+r.path+" "+o.id)
		}
	}
	want := []string{
		"get /apis/minik.test/v1/widgets listMinikTestV1Widget",
		"post /apis/minik.test/v1/widgets createMinikTestV1Widget",
		"delete /apis/minik.test/v1/widgets deleteMinikTestV1CollectionWidget",
		"get /apis/minik.test/v1/widgets/{name} readMinikTestV1Widget",
		"put /apis/minik.test/v1/widgets/{name} replaceMinikTestV1Widget",
		"patch /apis/minik.test/v1/widgets/{name} patchMinikTestV1Widget",
		"delete /apis/minik.test/v1/widgets/{name} deleteMinikTestV1Widget",
	}
	if len(got) != len(want) {
		t.Fatalf("operations = %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("operation %d = %q, want %q", i, got[i], want[i])
		}
	}
}
