package endpoints_test

//lint:file-ignore SA1019 core/v1 Endpoints and ComponentStatus are deprecated, and kube-apiserver still serves them: so does minik.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/endpoints"
	"minik/internal/testserver"
)

// render is an Endpoints as "ready: ip:port,… notReady: ip:port,…" per
// subset, joined by "; ".
func render(ep *corev1.Endpoints) string {
	var subsets []string
	for _, ss := range ep.Subsets {
		addrs := func(as []corev1.EndpointAddress) string {
			var out []string
			for _, a := range as {
				for _, p := range ss.Ports {
					out = append(out, fmt.Sprintf("%s:%d", a.IP, p.Port))
				}
			}
			return strings.Join(out, ",")
		}
		subsets = append(subsets, "ready: "+addrs(ss.Addresses)+" notReady: "+addrs(ss.NotReadyAddresses))
	}
	return strings.Join(subsets, "; ")
}

// TestEndpointsFollowPods runs the controller against a real API server:
// a Service's Endpoints list its pods' resolved ports, ready or not, with
// kube's labels and annotations, and go with the Service.
func TestEndpointsFollowPods(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{endpoints.Name}})
	cs := srv.Client(t)
	ctx := context.Background()
	const ns = "web"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, ready := range []bool{true, false} {
		name := fmt.Sprintf("web-%d", i)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setStatus(t, cs, ns, name, fmt.Sprintf("10.244.1.%d", i+1), ready)
	}

	var got *corev1.Endpoints
	ctrltest.Wait(t, "the Endpoints of web", func() bool {
		ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
		got = ep
		return err == nil && render(ep) == "ready: 10.244.1.1:8080 notReady: 10.244.1.2:8080"
	})
	if got.Labels["team"] != "a" || got.Labels[endpoints.LabelManagedBy] != endpoints.Component {
		t.Errorf("labels %v; want the Service's and %s=%s", got.Labels, endpoints.LabelManagedBy, endpoints.Component)
	}
	if _, err := time.Parse(time.RFC3339Nano, got.Annotations[corev1.EndpointsLastChangeTriggerTime]); err != nil {
		t.Errorf("annotation %s: %v", corev1.EndpointsLastChangeTriggerTime, err)
	}
	if p := got.Subsets[0].Ports[0]; p.Name != "http" || p.Protocol != corev1.ProtocolTCP {
		t.Errorf("port %+v; want http TCP", p)
	}
	if a := got.Subsets[0].Addresses[0]; a.TargetRef == nil || a.TargetRef.Name != "web-0" || a.NodeName == nil || *a.NodeName != "node-1" {
		t.Errorf("address %+v; want web-0 on node-1", a)
	}

	setStatus(t, cs, ns, "web-1", "10.244.1.2", true)
	ctrltest.Wait(t, "both pods ready", func() bool {
		ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && render(ep) == "ready: 10.244.1.1:8080,10.244.1.2:8080 notReady: "
	})

	if err := cs.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the Endpoints deleted with the Service", func() bool {
		_, err := cs.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// setStatus writes a pod's IP and readiness, as its kubelet would.
func setStatus(t *testing.T, cs kubernetes.Interface, ns, name, ip string, ready bool) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cond := corev1.ConditionFalse
		if ready {
			cond = corev1.ConditionTrue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: cond, LastTransitionTime: metav1.Now()}}
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTruncate checks kube's truncation at 1,000 addresses.
func TestTruncate(t *testing.T) {
	addrs := func(n int) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, n)
		for i := range out {
			out[i] = corev1.EndpointAddress{IP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}
		}
		return out
	}
	count := func(ep *corev1.Endpoints) (ready, notReady []int) {
		for _, ss := range ep.Subsets {
			ready = append(ready, len(ss.Addresses))
			notReady = append(notReady, len(ss.NotReadyAddresses))
		}
		return ready, notReady
	}
	tests := []struct {
		name                  string
		ready, notReady       []int // per subset
		truncated             bool
		wantReady, wantNotRdy []int
	}{
		{"1,000 addresses stay", []int{600}, []int{400}, false, []int{600}, []int{400}},
		{"not-ready addresses go first, in proportion", []int{500, 300}, []int{300, 100}, true, []int{500, 300}, []int{150, 50}},
		{"not-ready addresses are cut to what is left", []int{800, 100}, []int{200, 200}, true, []int{800, 100}, []int{50, 50}},
		{"too many ready addresses: every not-ready one goes", []int{900, 300}, []int{10, 0}, true, []int{750, 250}, []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &corev1.Endpoints{}
			for i := range tt.ready {
				ep.Subsets = append(ep.Subsets, corev1.EndpointSubset{Addresses: addrs(tt.ready[i]), NotReadyAddresses: addrs(tt.notReady[i])})
			}
			if got := endpoints.Truncate(ep); got != tt.truncated {
				t.Errorf("Truncate = %v; want %v", got, tt.truncated)
			}
			ready, notReady := count(ep)
			if fmt.Sprint(ready) != fmt.Sprint(tt.wantReady) || fmt.Sprint(notReady) != fmt.Sprint(tt.wantNotRdy) {
				t.Errorf("kept ready %v not-ready %v; want %v %v", ready, notReady, tt.wantReady, tt.wantNotRdy)
			}
		})
	}
}
