package endpointslicemirroring_test

//lint:file-ignore SA1019 core/v1 Endpoints are deprecated, and kube still mirrors the ones users write: so does minik.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/endpointslicemirroring"
	"minik/internal/testserver"
)

const ns = "default"

func mirrored(t *testing.T, cs kubernetes.Interface, name string) []discoveryv1.EndpointSlice {
	t.Helper()
	l, err := cs.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + name + "," + discoveryv1.LabelManagedBy + "=" + endpointslicemirroring.ManagedBy,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func selectorless(name string, port int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(port)}},
	}}
}

func customEndpoints(name string, port int32, ready []string, notReady []string) *corev1.Endpoints {
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{"team": "a"},
		Annotations: map[string]string{corev1.EndpointsLastChangeTriggerTime: "2026-01-01T00:00:00Z", "note": "custom"},
	}}
	ss := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: "http", Port: port, Protocol: corev1.ProtocolTCP}}}
	for _, ip := range ready {
		ss.Addresses = append(ss.Addresses, corev1.EndpointAddress{IP: ip})
	}
	for _, ip := range notReady {
		ss.NotReadyAddresses = append(ss.NotReadyAddresses, corev1.EndpointAddress{IP: ip})
	}
	ep.Subsets = []corev1.EndpointSubset{ss}
	return ep
}

// readiness maps a slice's addresses to their ready condition.
func readiness(s *discoveryv1.EndpointSlice) map[string]bool {
	out := map[string]bool{}
	for _, e := range s.Endpoints {
		out[e.Addresses[0]] = e.Conditions.Ready != nil && *e.Conditions.Ready
	}
	return out
}

// TestCustomEndpointsAreMirrored: the Endpoints of a Service without a
// selector get a slice per address family, with the Endpoints' labels
// and annotations (not the trigger time), owned by the Endpoints; it
// follows the Endpoints' changes and goes when the Service gets a
// selector, when the Endpoints say skip-mirror, and when the Endpoints go.
func TestCustomEndpointsAreMirrored(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{endpointslicemirroring.Name}})
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Services(ns).Create(ctx, selectorless("db", 5432), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ep, err := cs.CoreV1().Endpoints(ns).Create(ctx, customEndpoints("db", 5432, []string{"10.0.0.1", "fd00::1"}, []string{"10.0.0.2"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var v4, v6 *discoveryv1.EndpointSlice
	ctrltest.Wait(t, "an IPv4 and an IPv6 slice", func() bool {
		v4, v6 = nil, nil
		items := mirrored(t, cs, "db")
		for i := range items {
			switch items[i].AddressType {
			case discoveryv1.AddressTypeIPv4:
				v4 = &items[i]
			case discoveryv1.AddressTypeIPv6:
				v6 = &items[i]
			}
		}
		return len(items) == 2 && v4 != nil && v6 != nil
	})
	if got := readiness(v4); len(got) != 2 || !got["10.0.0.1"] || got["10.0.0.2"] {
		t.Errorf("IPv4 endpoints %v; want 10.0.0.1 ready, 10.0.0.2 not", got)
	}
	if got := readiness(v6); len(got) != 1 || !got["fd00::1"] {
		t.Errorf("IPv6 endpoints %v; want fd00::1 ready", got)
	}
	if len(v4.Ports) != 1 || *v4.Ports[0].Port != 5432 || *v4.Ports[0].Name != "http" {
		t.Errorf("ports %+v; want http/5432", v4.Ports)
	}
	if v4.Labels["team"] != "a" || v4.Annotations["note"] != "custom" {
		t.Errorf("labels %v annotations %v; want the Endpoints'", v4.Labels, v4.Annotations)
	}
	if _, ok := v4.Annotations[corev1.EndpointsLastChangeTriggerTime]; ok {
		t.Errorf("the trigger time annotation is mirrored: %v", v4.Annotations)
	}
	if ref := metav1.GetControllerOf(v4); ref == nil || ref.Kind != "Endpoints" || ref.UID != ep.UID {
		t.Errorf("controller %+v; want the Endpoints", ref)
	}

	t.Run("an address change rewrites the slice in place", func(t *testing.T) {
		update(t, cs, "db", func(ep *corev1.Endpoints) {
			ep.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "10.0.0.3"}}
			ep.Subsets[0].NotReadyAddresses = nil
		})
		ctrltest.Wait(t, "10.0.0.3 alone in the IPv4 slice, no IPv6 slice", func() bool {
			items := mirrored(t, cs, "db")
			if len(items) != 1 {
				return false
			}
			got := readiness(&items[0])
			return len(got) == 1 && got["10.0.0.3"] && items[0].Name == v4.Name
		})
	})

	t.Run("a selector takes the mirrored slices away", func(t *testing.T) {
		setSelector(t, cs, "db", map[string]string{"app": "db"})
		ctrltest.Wait(t, "no mirrored slice", func() bool { return len(mirrored(t, cs, "db")) == 0 })
		setSelector(t, cs, "db", nil)
		ctrltest.Wait(t, "the slice back", func() bool { return len(mirrored(t, cs, "db")) == 1 })
	})

	t.Run("skip-mirror takes them away", func(t *testing.T) {
		update(t, cs, "db", func(ep *corev1.Endpoints) { ep.Labels[discoveryv1.LabelSkipMirror] = "true" })
		ctrltest.Wait(t, "no mirrored slice", func() bool { return len(mirrored(t, cs, "db")) == 0 })
		update(t, cs, "db", func(ep *corev1.Endpoints) { delete(ep.Labels, discoveryv1.LabelSkipMirror) })
		ctrltest.Wait(t, "the slice back", func() bool { return len(mirrored(t, cs, "db")) == 1 })
	})

	t.Run("a deleted slice comes back", func(t *testing.T) {
		s := mirrored(t, cs, "db")[0]
		if err := cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "a new slice", func() bool {
			items := mirrored(t, cs, "db")
			return len(items) == 1 && items[0].UID != s.UID
		})
	})

	t.Run("deleting the Service takes them away", func(t *testing.T) {
		if err := cs.CoreV1().Services(ns).Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "no mirrored slice", func() bool { return len(mirrored(t, cs, "db")) == 0 })
	})
}

// TestTooManyAddresses: a subset mirrors at most 1000 addresses, and says
// so in an event.
func TestTooManyAddresses(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{endpointslicemirroring.Name}})
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Services(ns).Create(ctx, selectorless("many", 80), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ips []string
	for i := range 1005 {
		ips = append(ips, fmt.Sprintf("10.1.%d.%d", i/250, i%250+1))
	}
	if _, err := cs.CoreV1().Endpoints(ns).Create(ctx, customEndpoints("many", 80, ips, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "one slice of 1000 endpoints", func() bool {
		items := mirrored(t, cs, "many")
		return len(items) == 1 && len(items[0].Endpoints) == endpointslicemirroring.MaxEndpointsPerSubset
	})
	ctrltest.Wait(t, "a TooManyAddressesToMirror event", func() bool {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + endpointslicemirroring.ReasonTooManyAddressesToMirror})
		return err == nil && len(evs.Items) > 0 &&
			evs.Items[0].Message == "A max of 1000 addresses can be mirrored to EndpointSlices per Endpoints subset. 5 addresses were skipped"
	})
}

// TestServiceProxyReachesCustomEndpoints: the data plane's Service proxy
// sends a selector-less Service's traffic to the address its custom
// Endpoints name (a server of this test), through the mirrored slice.
func TestServiceProxyReachesCustomEndpoints(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "custom backend")
	}))
	t.Cleanup(backend.Close)
	host, portStr, err := net.SplitHostPort(backend.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)

	srv := testserver.StartWith(t, testserver.Options{DataPlane: true, Controllers: []string{endpointslicemirroring.Name}})
	cs := srv.Client(t)
	ctx := context.Background()
	svc := selectorless("external", 80)
	svc.Spec.Ports[0].TargetPort = intstr.FromInt32(int32(port))
	svc, err = cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Endpoints(ns).Create(ctx, customEndpoints("external", int32(port), []string{host}, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80") + "/"
	ctrltest.Wait(t, "the ClusterIP answering from the custom backend", func() bool {
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b) == "custom backend"
	})
}

func update(t *testing.T, cs kubernetes.Interface, name string, mutate func(*corev1.Endpoints)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ep, err := cs.CoreV1().Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(ep)
		_, err = cs.CoreV1().Endpoints(ns).Update(context.Background(), ep, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setSelector(t *testing.T, cs kubernetes.Interface, name string, sel map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := cs.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		svc.Spec.Selector = sel
		_, err = cs.CoreV1().Services(ns).Update(context.Background(), svc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
