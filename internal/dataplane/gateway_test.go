package dataplane_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"minik/internal/dataplane"
)

func backendRef(svc string, weight int32) gatewayv1.HTTPBackendRef {
	return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: new(gatewayv1.PortNumber(80))},
		Weight:                 new(weight),
	}}
}

// do sends a request on a fresh connection.
func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := freshClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

func conditionTrue(conds []metav1.Condition, t string) bool {
	return meta.IsStatusConditionTrue(conds, t)
}

func TestGatewayAPI(t *testing.T) {
	e := start(t, dataplane.ModeDirect)
	ctx := context.Background()
	gc, err := gatewayclient.NewForConfig(e.srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	api := gc.GatewayV1()
	base := "http://" + e.srv.IngressHTTP
	for _, n := range []string{"web-a", "web-b", "web-c"} {
		e.pod(n, "web", true)
	}
	e.pod("canary-a", "canary", true)
	e.service("web", "web")
	e.service("canary", "canary")

	t.Run("the minik GatewayClass is accepted", func(t *testing.T) {
		waitFor(t, "GatewayClass minik Accepted", func() bool {
			c, err := api.GatewayClasses().Get(ctx, dataplane.GatewayClassName, metav1.GetOptions{})
			return err == nil && conditionTrue(c.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted))
		})
	})

	_, err = api.Gateways(e.ns).Create(ctx, &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: dataplane.GatewayClassName, Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"web.demo.local"},
			Rules: []gatewayv1.HTTPRouteRule{
				{
					Matches:     []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Canary", Value: "yes"}}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{backendRef("canary", 1)},
				},
				{
					Matches: []gatewayv1.HTTPRouteMatch{{
						Path:   &gatewayv1.HTTPPathMatch{Type: new(gatewayv1.PathMatchExact), Value: new("/split")},
						Method: new(gatewayv1.HTTPMethodGet),
					}},
					BackendRefs: []gatewayv1.HTTPBackendRef{backendRef("web", 3), backendRef("canary", 1)},
				},
				{BackendRefs: []gatewayv1.HTTPBackendRef{backendRef("web", 1)}},
				{
					Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: new("/missing")}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{backendRef("no-such-service", 1)},
				},
			},
		},
	}
	if _, err := api.HTTPRoutes(e.ns).Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("the Gateway is accepted and programmed, its listener counts the route", func(t *testing.T) {
		waitFor(t, "Gateway gw programmed", func() bool {
			g, err := api.Gateways(e.ns).Get(ctx, "gw", metav1.GetOptions{})
			return err == nil && conditionTrue(g.Status.Conditions, string(gatewayv1.GatewayConditionAccepted)) &&
				conditionTrue(g.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)) &&
				len(g.Status.Listeners) == 1 && g.Status.Listeners[0].AttachedRoutes == 1 &&
				conditionTrue(g.Status.Listeners[0].Conditions, string(gatewayv1.ListenerConditionProgrammed)) &&
				len(g.Status.Addresses) == 1 && g.Status.Addresses[0].Value == "127.0.0.1"
		})
	})

	t.Run("the route is accepted; a missing backend makes ResolvedRefs false", func(t *testing.T) {
		waitFor(t, "HTTPRoute web status", func() bool {
			r, err := api.HTTPRoutes(e.ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil || len(r.Status.Parents) != 1 {
				return false
			}
			p := r.Status.Parents[0]
			rr := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs))
			return p.ControllerName == dataplane.GatewayController && conditionTrue(p.Conditions, string(gatewayv1.RouteConditionAccepted)) &&
				rr != nil && rr.Status == metav1.ConditionFalse && rr.Reason == string(gatewayv1.RouteReasonBackendNotFound)
		})
	})

	waitAnsweredByAll(t, base+"/", "web.demo.local", "web-a", "web-b", "web-c")

	t.Run("the host is answered by each of the 3 pods in turn", func(t *testing.T) {
		got := tally(t, freshClient, 30, base+"/", "web.demo.local")
		if got["web-a"] != 10 || got["web-b"] != 10 || got["web-c"] != 10 {
			t.Fatalf("answers %v, want 10 each", got)
		}
	})

	t.Run("a header match wins over a path-only rule", func(t *testing.T) {
		if _, body, _ := get(freshClient, base+"/x", "web.demo.local"); body == "canary-a" {
			t.Fatal("a request without the header went to the canary")
		}
		for range 10 {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.Host = "web.demo.local"
			req.Header.Set("X-Canary", "yes")
			if code, body := do(t, req); code != 200 || body != "canary-a" {
				t.Fatalf("a header-matched request got %d %q", code, body)
			}
		}
	})

	t.Run("weighted backendRefs split the traffic", func(t *testing.T) {
		got := tally(t, freshClient, 400, base+"/split", "web.demo.local")
		canary := got["canary-a"]
		if canary < 60 || canary > 140 {
			t.Fatalf("weights 3:1 gave %v", got)
		}
	})

	t.Run("an exact path with a method does not match another method", func(t *testing.T) {
		for range 20 {
			req, _ := http.NewRequest(http.MethodPost, base+"/split", nil)
			req.Host = "web.demo.local"
			if _, body := do(t, req); body == "canary-a" {
				t.Fatal("a POST matched the GET-only rule")
			}
		}
	})

	t.Run("a backend that does not exist answers 500", func(t *testing.T) {
		code, body, err := get(freshClient, base+"/missing", "web.demo.local")
		if err != nil || code != 500 {
			t.Fatalf("got %d %q %v", code, body, err)
		}
	})

	t.Run("a route from another namespace is not allowed by a Same listener", func(t *testing.T) {
		if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r := &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "intruder"},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: new(gatewayv1.Namespace(e.ns))}}},
				Hostnames:       []gatewayv1.Hostname{"intruder.local"},
			},
		}
		if _, err := api.HTTPRoutes("other").Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "intruder NotAllowedByListeners", func() bool {
			r, err := api.HTTPRoutes("other").Get(ctx, "intruder", metav1.GetOptions{})
			if err != nil || len(r.Status.Parents) != 1 {
				return false
			}
			c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, string(gatewayv1.RouteConditionAccepted))
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == string(gatewayv1.RouteReasonNotAllowedByListeners)
		})
		if code, _, _ := get(freshClient, base+"/", "intruder.local"); code != 404 {
			t.Fatalf("a route the listener does not allow answered %d", code)
		}
	})
}
