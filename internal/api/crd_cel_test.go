package api_test

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"minik/internal/testserver"
)

// gaugeCRD is a cluster-scoped definition whose schema carries
// x-kubernetes-validations: a rule across fields with a message, a
// messageExpression with a reason and fieldPath, and a transition rule
// (oldSelf) that makes spec.unit immutable.
func gaugeCRD() *apiextensionsv1.CustomResourceDefinition {
	forbidden := apiextensionsv1.FieldValueForbidden
	spec := apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"min":  {Type: "integer"},
			"max":  {Type: "integer"},
			"unit": {Type: "string", XValidations: apiextensionsv1.ValidationRules{{Rule: "self == oldSelf", Message: "unit is immutable"}}},
			"name": {Type: "string", MaxLength: ptr.To[int64](10)},
		},
		XValidations: apiextensionsv1.ValidationRules{
			{Rule: "self.min <= self.max", Message: "min must not exceed max"},
			{Rule: "!has(self.name) || self.name.startsWith('g-')", MessageExpression: "'name ' + self.name + ' must start with g-'", Reason: &forbidden, FieldPath: ".name"},
		},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gauges.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gauges", Singular: "gauge", Kind: "Gauge"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
				}},
			}},
		},
	}
}

func gauge(name string, spec map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Gauge",
		"metadata": map[string]interface{}{"name": name}, "spec": spec,
	}}
}

func TestCustomResourceValidationRules(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	ctx := context.Background()
	establish(t, srv.RESTConfig, gaugeCRD())
	gauges := dynamic.NewForConfigOrDie(srv.RESTConfig).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gauges"})

	// The messages are kube's CEL validator's own (apiextensions-apiserver).
	invalid := func(t *testing.T, err error, want string) {
		t.Helper()
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant 422 %q", err, want)
		}
	}
	t.Run("a rule across fields refuses with its message", func(t *testing.T) {
		_, err := gauges.Create(ctx, gauge("a", map[string]interface{}{"min": int64(5), "max": int64(1)}), metav1.CreateOptions{})
		invalid(t, err, `Gauge.example.com "a" is invalid: spec: Invalid value: min must not exceed max`)
	})
	t.Run("messageExpression, reason and fieldPath shape the error", func(t *testing.T) {
		_, err := gauges.Create(ctx, gauge("b", map[string]interface{}{"min": int64(1), "max": int64(2), "name": "x"}), metav1.CreateOptions{})
		invalid(t, err, `Gauge.example.com "b" is invalid: spec.name: Forbidden: name x must start with g-`)
	})
	t.Run("schema errors that block the rules say so", func(t *testing.T) {
		_, err := gauges.Create(ctx, gauge("c", map[string]interface{}{"min": int64(5), "max": int64(1), "name": "g-much-too-long"}), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "some validation rules were not checked because the object was invalid") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a transition rule compares with oldSelf on update", func(t *testing.T) {
		g, err := gauges.Create(ctx, gauge("d", map[string]interface{}{"min": int64(1), "max": int64(2), "unit": "s"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("a valid gauge: %v", err)
		}
		_ = unstructured.SetNestedField(g.Object, "ms", "spec", "unit")
		_, err = gauges.Update(ctx, g, metav1.UpdateOptions{})
		invalid(t, err, `Gauge.example.com "d" is invalid: spec.unit: Invalid value: "ms": unit is immutable`)
		_ = unstructured.SetNestedField(g.Object, "s", "spec", "unit")
		_ = unstructured.SetNestedField(g.Object, int64(3), "spec", "max")
		if _, err := gauges.Update(ctx, g, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("an update keeping the unit: %v", err)
		}
	})
	t.Run("a definition whose rule does not compile is refused", func(t *testing.T) {
		bad := gaugeCRD()
		bad.Name, bad.Spec.Names = "meters.example.com", apiextensionsv1.CustomResourceDefinitionNames{Plural: "meters", Singular: "meter", Kind: "Meter"}
		s := bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.nope >"}}
		bad.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = s
		_, err := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "compilation failed") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestCustomResourceSelectableFields(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "lamps.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "lamps", Singular: "lamp", Kind: "Lamp"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"color": {Type: "string"}, "watts": {Type: "integer"},
					}}},
				}},
				SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}, {JSONPath: ".spec.watts"}},
			}},
		},
	}
	establish(t, srv.RESTConfig, crd)
	lamps := dynamic.NewForConfigOrDie(srv.RESTConfig).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "lamps"}).Namespace("default")
	for name, spec := range map[string]map[string]interface{}{
		"a": {"color": "red", "watts": int64(40)},
		"b": {"color": "blue", "watts": int64(40)},
		"c": {"color": "red", "watts": int64(60)},
		"d": {},
	} {
		l := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Lamp", "metadata": map[string]interface{}{"name": name}, "spec": spec}}
		if _, err := lamps.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for sel, want := range map[string]string{
		"spec.color=red":                "a,c",
		"spec.watts=40":                 "a,b",
		"spec.color=red,spec.watts!=40": "c",
		"spec.color=":                   "d",
	} {
		list, err := lamps.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			t.Fatalf("list %s: %v", sel, err)
		}
		var names []string
		for _, l := range list.Items {
			names = append(names, l.GetName())
		}
		if got := strings.Join(names, ","); got != want {
			t.Errorf("list %s = %s, want %s", sel, got, want)
		}
	}
	_, err := lamps.List(ctx, metav1.ListOptions{FieldSelector: "spec.nope=x"})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "field label not supported: spec.nope") {
		t.Errorf("list by an undeclared field: %v", err)
	}
}
