package dataplane_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"minik/internal/dataplane"
	"minik/internal/testserver"
)

// applyWebYAML creates the objects of testdata/web.yaml.
func applyWebYAML(t *testing.T, srv *testserver.Server) {
	t.Helper()
	data, err := os.ReadFile("../../testdata/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs := srv.Client(t)
	ctx := context.Background()
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decode web.yaml: %v", err)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *networkingv1.Ingress:
			_, err = cs.NetworkingV1().Ingresses(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("unexpected %T in web.yaml", obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// podOf finds the pod name in the simulated nginx's answer.
var podOf = regexp.MustCompile(`demo/web-[a-z0-9]+-[a-z0-9]+`)

// answeredBy sends n requests and counts the answering pods; any failed
// request fails the test.
func answeredBy(t *testing.T, n int, url, host string) map[string]int {
	t.Helper()
	out, err := tryAnsweredBy(n, url, host)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryAnsweredBy sends n requests and counts the answering pods, stopping
// at the first failed request.
func tryAnsweredBy(n int, url, host string) (map[string]int, error) {
	out := map[string]int{}
	for range n {
		code, body, err := get(freshClient, url, host)
		if err != nil || code != 200 {
			return out, fmt.Errorf("GET %s (Host %s): %d %v", url, host, code, err)
		}
		out[podOf.FindString(body)]++
	}
	return out, nil
}

// evenly tells whether n pods answered each exactly each times.
func evenly(got map[string]int, n, each int) bool {
	if len(got) != n {
		return false
	}
	for pod, c := range got {
		if pod == "" || c != each {
			return false
		}
	}
	return true
}

// TestReleaseJourney is the seed's stage five on the real thing:
// testdata/web.yaml applied to a cluster with controllers, scheduler,
// three simulated nodes and the data plane; once rolled out, the Ingress
// host, the ClusterIP and a Gateway route are each answered by the three
// pods in turn, and a rolling update under load fails no request.
func TestReleaseJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a full cluster")
	}
	for _, mode := range []string{dataplane.ModeService, dataplane.ModeDirect} {
		t.Run("in mode "+mode, func(t *testing.T) { testReleaseJourney(t, mode) })
	}
}

func testReleaseJourney(t *testing.T, mode string) {
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{"deployment", "replicaset", "endpointslice", "crd"},
		Scheduler:   true, Nodes: 3, DataPlane: true, IngressMode: mode,
	})
	cs := srv.Client(t)
	ctx := context.Background()
	applyWebYAML(t, srv)
	waitFor(t, "deployment web rolled out", func() bool {
		d, err := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 3 && d.Status.UpdatedReplicas == 3
	})
	ingress := "http://" + srv.IngressHTTP + "/"
	waitFor(t, "3 pods answering the Ingress host", func() bool {
		// Until the Ingress controller has the route, the proxy answers 404.
		got, err := tryAnsweredBy(6, ingress, "web.demo.local")
		return err == nil && len(got) == 3
	})

	t.Run("the Ingress host is answered by each of the 3 pods in turn", func(t *testing.T) {
		if got := answeredBy(t, 30, ingress, "web.demo.local"); !evenly(got, 3, 10) {
			t.Fatalf("answers %v, want 10 from each of 3 pods", got)
		}
	})

	t.Run("the ClusterIP is answered by each of the 3 pods from the host", func(t *testing.T) {
		svc, err := cs.CoreV1().Services("demo").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := answeredBy(t, 30, "http://"+net.JoinHostPort(svc.Spec.ClusterIP, "80")+"/", ""); !evenly(got, 3, 10) {
			t.Fatalf("answers %v, want 10 from each of 3 pods", got)
		}
	})

	t.Run("a Gateway and HTTPRoute route to the same pods", func(t *testing.T) {
		gc, err := gatewayclient.NewForConfig(srv.RESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		_, err = gc.GatewayV1().Gateways("demo").Create(ctx, &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: dataplane.GatewayClassName,
				Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = gc.GatewayV1().HTTPRoutes("demo").Create(ctx, &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "web"}}},
				Hostnames:       []gatewayv1.Hostname{"gw.demo.local"},
				Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backendRef("web", 1)}}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the HTTPRoute serving", func() bool {
			code, _, err := get(freshClient, ingress, "gw.demo.local")
			return err == nil && code == 200
		})
		if got := answeredBy(t, 30, ingress, "gw.demo.local"); !evenly(got, 3, 10) {
			t.Fatalf("answers %v, want 10 from each of 3 pods", got)
		}
	})

	t.Run("a rolling update under load fails no request", func(t *testing.T) {
		stop := make(chan struct{})
		wait := load(freshClient, 4, ingress, "web.demo.local", stop)
		time.Sleep(200 * time.Millisecond)
		patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"minik.io/restartedAt":"` + time.Now().Format(time.RFC3339Nano) + `"}}}}}`)
		if _, err := cs.AppsV1().Deployments("demo").Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the rollout done", func() bool {
			d, err := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
			if err != nil || d.Status.ObservedGeneration < d.Generation {
				return false
			}
			pods, err := cs.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			return err == nil && len(pods.Items) == 3 && d.Status.UpdatedReplicas == 3 && d.Status.ReadyReplicas == 3 && d.Status.Replicas == 3
		})
		time.Sleep(200 * time.Millisecond)
		close(stop)
		sent, failed, first := wait()
		t.Logf("rolling update under load (%s mode): %d requests sent, %d failed", mode, sent, failed)
		if failed > 0 {
			t.Fatalf("%d of %d requests failed; first: %s", failed, sent, first)
		}
	})
}
