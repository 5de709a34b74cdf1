package tables

import (
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"minik/internal/gatewayapi/crds"
)

// The Gateway API kinds are served from their CRDs (internal/gatewayapi/crds):
// their tables are PrinterColumns of the CRDs' additionalPrinterColumns.
var (
	gatewayClassTable   = crdTable("gatewayclasses")
	gatewayTable        = crdTable("gateways")
	httpRouteTable      = crdTable("httproutes")
	referenceGrantTable = crdTable("referencegrants")
)

// crdTable is the table of the embedded Gateway API CRD of a resource, at
// its storage version.
func crdTable(plural string) Table {
	b, err := crds.Load()
	if err != nil {
		panic(err)
	}
	for _, crd := range b.CRDs {
		if crd.Spec.Names.Plural != plural {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				t, err := PrinterColumns(v.AdditionalPrinterColumns)
				if err != nil {
					panic(err)
				}
				return t
			}
		}
	}
	panic("no CRD of " + plural)
}

// Fixtures of the Gateway API tables, typed as the data plane reads them.

func gatewayClassFixtures() []runtime.Object {
	return []runtime.Object{
		&gatewayv1.GatewayClass{ObjectMeta: clusterMeta("minik", 3*time.Hour),
			Spec: gatewayv1.GatewayClassSpec{ControllerName: "minik.dev/gateway", Description: ptrTo("the built-in data plane")},
			Status: gatewayv1.GatewayClassStatus{Conditions: []metav1.Condition{
				{Type: "SupportedVersion", Status: metav1.ConditionTrue},
				{Type: "Accepted", Status: metav1.ConditionTrue},
			}}},
		&gatewayv1.GatewayClass{ObjectMeta: clusterMeta("pending", 20*time.Second),
			Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/other"}},
	}
}

func gatewayFixtures() []runtime.Object {
	return []runtime.Object{
		&gatewayv1.Gateway{ObjectMeta: objMeta("web", 90*time.Minute),
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "minik"},
			Status: gatewayv1.GatewayStatus{
				Addresses:  []gatewayv1.GatewayStatusAddress{{Value: "10.96.0.20"}, {Value: "10.96.0.21"}},
				Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue}, {Type: "Programmed", Status: metav1.ConditionFalse}},
			}},
		&gatewayv1.Gateway{ObjectMeta: objMeta("new", 3*time.Second), Spec: gatewayv1.GatewaySpec{GatewayClassName: "minik"}},
	}
}

func httpRouteFixtures() []runtime.Object {
	return []runtime.Object{
		&gatewayv1.HTTPRoute{ObjectMeta: objMeta("web", 4*24*time.Hour),
			Spec: gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"web.example.com", "*.web.example.com"}}},
		&gatewayv1.HTTPRoute{ObjectMeta: objMeta("any-host", 61*time.Second)},
	}
}

// A custom resource prints its printer columns from its JSON: a typed
// object and the same object unstructured give the same cells.
func TestPrinterColumnsReadTypedAndUnstructuredAlike(t *testing.T) {
	c := gatewayTable.Convertor(clock)
	for _, obj := range gatewayFixtures() {
		typed, err := c.Row(obj)
		if err != nil {
			t.Fatal(err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		u, err := c.Row(&unstructured.Unstructured{Object: m})
		if err != nil {
			t.Fatal(err)
		}
		if len(typed) != len(u) {
			t.Fatalf("typed %v, unstructured %v", typed, u)
		}
		for i := range typed {
			if typed[i] != u[i] {
				t.Errorf("column %d: typed %#v, unstructured %#v", i, typed[i], u[i])
			}
		}
	}
}

func TestPrinterColumnsRefuseABadJSONPath(t *testing.T) {
	_, err := PrinterColumns([]apiextensionsv1.CustomResourceColumnDefinition{{Name: "Bad", Type: "string", JSONPath: ".spec[?("}})
	if err == nil || err.Error() != `unrecognized column definition ".spec[?("` {
		t.Errorf("err = %v; want kube's unrecognized column definition", err)
	}
}

// A printer column's cell is typed as its column is, as kube types it: a
// value of another type is nil, a date that does not parse "<invalid>".
func TestPrinterColumnCellTypes(t *testing.T) {
	for _, tc := range []struct {
		typ   string
		value interface{}
		want  interface{}
	}{
		{"integer", int64(3), int64(3)},
		{"integer", float64(3), int64(3)},
		{"integer", "3", nil},
		{"number", int64(2), float64(2)},
		{"boolean", true, true},
		{"boolean", "true", nil},
		{"date", now.Add(-2 * time.Hour).Format(time.RFC3339), "120m"},
		{"date", "yesterday", "<invalid>"},
		{"string", nil, nil},
	} {
		if got := cellForJSONValue(tc.typ, tc.value, now); got != tc.want {
			t.Errorf("cell of %s %#v = %#v; want %#v", tc.typ, tc.value, got, tc.want)
		}
	}
}
