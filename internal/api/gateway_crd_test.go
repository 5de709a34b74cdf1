package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"minik/internal/testserver"
)

// The Gateway API is served from the CRDs minikd installs: their schema
// defaults, CEL rules, status subresource and printer columns.
func TestGatewayAPIServedFromItsCRDs(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	srv.WaitForGatewayAPI(t)
	ctx := context.Background()
	gc, err := gatewayclient.NewForConfig(srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	api := gc.GatewayV1()
	pending := func(t *testing.T, conds []metav1.Condition, types ...string) {
		t.Helper()
		if len(conds) != len(types) {
			t.Fatalf("conditions %+v; want %v pending", conds, types)
		}
		for i, c := range conds {
			if c.Type != types[i] || c.Status != metav1.ConditionUnknown || c.Reason != "Pending" || c.Message != "Waiting for controller" || !c.LastTransitionTime.Equal(&metav1.Time{}) && c.LastTransitionTime.Unix() != 0 {
				t.Errorf("condition %d: %+v; want %s Unknown Pending at the epoch", i, c, types[i])
			}
		}
	}

	class, err := api.GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: "example.com/gateway"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a new GatewayClass has the schema's default status", func(t *testing.T) {
		pending(t, class.Status.Conditions, "Accepted")
		if class.Generation != 1 {
			t.Errorf("generation %d", class.Generation)
		}
	})

	t.Run("a GatewayClass's controllerName is immutable (its x-kubernetes-validations)", func(t *testing.T) {
		next := class.DeepCopy()
		next.Spec.ControllerName = "example.com/other"
		_, err := api.GatewayClasses().Update(ctx, next, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.controllerName") || !strings.Contains(err.Error(), "Value is immutable") {
			t.Errorf("err = %v; want Invalid: spec.controllerName: Value is immutable", err)
		}
	})

	t.Run("a GatewayClass's controllerName must be a domain-prefixed path (its pattern)", func(t *testing.T) {
		_, err := api.GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "no-slash"},
		}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.controllerName") || !strings.Contains(err.Error(), "should match") {
			t.Errorf("err = %v; want Invalid: spec.controllerName should match", err)
		}
	})

	t.Run("status written through the main resource is dropped (status subresource)", func(t *testing.T) {
		next := class.DeepCopy()
		next.Status.Conditions[0].Status = metav1.ConditionTrue
		next.Spec.Description = new("described")
		got, err := api.GatewayClasses().Update(ctx, next, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Conditions[0].Status != metav1.ConditionUnknown || got.Generation != 2 {
			t.Errorf("status %+v, generation %d", got.Status, got.Generation)
		}
	})

	gw, err := api.Gateways("default").Create(ctx, &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a Gateway gets the schema's defaults", func(t *testing.T) {
		pending(t, gw.Status.Conditions, "Accepted", "Programmed")
		l := gw.Spec.Listeners[0]
		if l.AllowedRoutes == nil || l.AllowedRoutes.Namespaces == nil || l.AllowedRoutes.Namespaces.From == nil || *l.AllowedRoutes.Namespaces.From != gatewayv1.NamespacesFromSame {
			t.Errorf("listener %+v; want allowedRoutes.namespaces.from Same", l)
		}
	})

	t.Run("a Gateway's listener names must be unique (a CEL rule)", func(t *testing.T) {
		_, err := api.Gateways("default").Create(ctx, &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "twice"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
				{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
				{Name: "http", Port: 81, Protocol: gatewayv1.HTTPProtocolType},
			}},
		}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "Listener name must be unique within the Gateway") {
			t.Errorf("err = %v; want the CEL rule's message", err)
		}
	})

	t.Run("an HTTPRoute with a relative path prefix is refused with the CRD's CEL message", func(t *testing.T) {
		_, err := api.HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "relative"},
			Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: new(gatewayv1.PathMatchPathPrefix), Value: new("api")}}},
			}}},
		}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']") {
			t.Errorf("err = %v; want the CEL rule's message", err)
		}
	})

	t.Run("an HTTPRoute's rule matches default to the path prefix /", func(t *testing.T) {
		r, err := api.HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "web"}}},
				Rules:           []gatewayv1.HTTPRouteRule{{}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := r.Spec.Rules[0].Matches
		if len(m) != 1 || m[0].Path == nil || *m[0].Path.Type != gatewayv1.PathMatchPathPrefix || *m[0].Path.Value != "/" {
			t.Errorf("matches %+v; want the default PathPrefix /", m)
		}
		if p := r.Spec.ParentRefs[0]; p.Group == nil || *p.Group != gatewayv1.GroupName || p.Kind == nil || *p.Kind != "Gateway" {
			t.Errorf("parentRef %+v; want group and kind defaulted", p)
		}
	})

	t.Run("tables have the CRDs' additionalPrinterColumns", func(t *testing.T) {
		for path, want := range map[string]string{
			"/apis/gateway.networking.k8s.io/v1/gatewayclasses":                "Name Controller Accepted Age Description",
			"/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways":   "Name Class Address Programmed Age",
			"/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes": "Name Hostnames Age",
		} {
			raw, err := srv.Client(t).Discovery().RESTClient().Get().AbsPath(path).
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var table metav1.Table
			if err := json.Unmarshal(raw, &table); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range table.ColumnDefinitions {
				names = append(names, c.Name)
			}
			if strings.Join(names, " ") != want || len(table.Rows) != 1 {
				t.Errorf("%s: columns %v, %d rows; want %s and one row", path, names, len(table.Rows), want)
			}
		}
	})
}
