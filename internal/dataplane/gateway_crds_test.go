package dataplane_test

import (
	"context"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"minik/internal/dataplane"
	"minik/internal/gatewayapi/crds"
)

// The Gateway controller follows its CRDs: when a user deletes them it
// idles (the Gateway routes go, the Ingress proxy serves on), and when
// they are installed again it starts again and recreates its class.
func TestGatewayControllerFollowsItsCRDs(t *testing.T) {
	e := start(t, dataplane.ModeDirect)
	ctx := context.Background()
	gc, err := gatewayclient.NewForConfig(e.srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	xc := apiextensionsclient.NewForConfigOrDie(e.srv.RESTConfig)
	api := gc.GatewayV1()
	base := "http://" + e.srv.IngressHTTP
	e.pod("web-a", "web", true)
	e.service("web", "web")
	classAccepted := func() bool {
		c, err := api.GatewayClasses().Get(ctx, dataplane.GatewayClassName, metav1.GetOptions{})
		return err == nil && conditionTrue(c.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted))
	}
	route := func() {
		t.Helper()
		_, err := api.Gateways(e.ns).Create(ctx, &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "gw"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: dataplane.GatewayClassName, Listeners: []gatewayv1.Listener{
				{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = api.HTTPRoutes(e.ns).Create(ctx, &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Hostnames:       []gatewayv1.Hostname{"web.demo.local"},
				Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backendRef("web", 1)}}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitAnsweredByAll(t, base+"/", "web.demo.local", "web-a")
	}

	waitFor(t, "GatewayClass minik Accepted", classAccepted)
	route()

	t.Run("deleting the CRDs stops the Gateway routes, the proxy serves on", func(t *testing.T) {
		deleted := []string{"httproutes.gateway.networking.k8s.io", "gatewayclasses.gateway.networking.k8s.io"}
		for _, name := range deleted {
			if err := xc.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The crd controller deletes their objects, then lets them go.
		for _, name := range deleted {
			waitFor(t, name+" gone", func() bool {
				_, err := xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			})
		}
		waitFor(t, "the Gateway host unrouted", func() bool {
			code, _, err := get(freshClient, base+"/", "web.demo.local")
			return err == nil && code == 404
		})
	})

	t.Run("installing the CRDs again starts the controller again", func(t *testing.T) {
		b, err := crds.Load()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := crds.Install(ctx, crds.Clients{APIExtensions: xc, Kubernetes: e.cs}, b); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "GatewayClass minik recreated and Accepted", classAccepted)
		// The Gateway outlived its class's CRD; a new route attaches.
		if err := api.Gateways(e.ns).Delete(ctx, "gw", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the old Gateway gone", func() bool {
			_, err := api.Gateways(e.ns).Get(ctx, "gw", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		route()
	})
}
