package endpointslice_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/endpointslice"
	"minik/internal/testserver"
)

// wait polls cond until it holds, failing the test after 20 seconds.
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type env struct {
	t  *testing.T
	cs kubernetes.Interface
	ns string
}

func start(t *testing.T) *env {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{endpointslice.Name}})
	e := &env{t: t, cs: srv.Client(t), ns: "web"}
	if _, err := e.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods need their namespace's default ServiceAccount (admission); no
	// serviceaccount controller runs here.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := e.cs.CoreV1().ServiceAccounts(e.ns).Create(context.Background(), sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return e
}

// pod creates a pod on node-1 whose container names port "http".
func (e *env) pod(name string, labels map[string]string, httpPort int32) *corev1.Pod {
	e.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: httpPort}}}},
		},
	}
	out, err := e.cs.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// status writes a pod's IP and readiness, as its kubelet would.
func (e *env) status(name, ip string, ready bool) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := e.cs.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
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
		_, err = e.cs.CoreV1().Pods(e.ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) service(name string, selector map[string]string, targetPort intstr.IntOrString) *corev1.Service {
	e.t.Helper()
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: targetPort}},
		},
	}
	out, err := e.cs.CoreV1().Services(e.ns).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) slices(svc string) []discoveryv1.EndpointSlice {
	e.t.Helper()
	list, err := e.cs.DiscoveryV1().EndpointSlices(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// endpoints renders a Service's endpoints as "pod ip:port ready/serving/terminating", sorted.
func (e *env) endpoints(svc string) []string {
	var out []string
	for _, s := range e.slices(svc) {
		for _, ep := range s.Endpoints {
			port := "-"
			if len(s.Ports) > 0 {
				port = fmt.Sprint(*s.Ports[0].Port)
			}
			c := ep.Conditions
			out = append(out, fmt.Sprintf("%s %s:%s %v/%v/%v", ep.TargetRef.Name, ep.Addresses[0], port, *c.Ready, *c.Serving, *c.Terminating))
		}
	}
	sort.Strings(out)
	return out
}

func (e *env) waitEndpoints(svc string, want ...string) {
	e.t.Helper()
	sort.Strings(want)
	var got []string
	deadline := time.Now().Add(20 * time.Second)
	for {
		got = e.endpoints(svc)
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("endpoints of %s:\n got %q\nwant %q", svc, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEndpointSlices(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	app := map[string]string{"app": "web"}
	svc := e.service("web", app, intstr.FromString("http"))

	t.Run("a Service whose selector matches no pod has one empty slice", func(t *testing.T) {
		wait(t, "a placeholder slice", func() bool { return len(e.slices("web")) == 1 })
		s := e.slices("web")[0]
		if len(s.Endpoints) != 0 || len(s.Ports) != 0 || s.AddressType != discoveryv1.AddressTypeIPv4 {
			t.Fatalf("placeholder: %+v", s)
		}
	})

	t.Run("the slice is labelled, named and owned as kube's are", func(t *testing.T) {
		s := e.slices("web")[0]
		if s.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" || s.Labels[discoveryv1.LabelServiceName] != "web" || s.Labels["team"] != "a" {
			t.Fatalf("labels %v", s.Labels)
		}
		if !strings.HasPrefix(s.Name, "web-") || s.GenerateName != "web-" {
			t.Fatalf("name %q generateName %q", s.Name, s.GenerateName)
		}
		ref := metav1.GetControllerOf(&s)
		if ref == nil || ref.Kind != "Service" || ref.Name != "web" || ref.UID != svc.UID {
			t.Fatalf("owner %+v", s.OwnerReferences)
		}
	})

	e.pod("web-a", app, 8080)
	e.pod("web-b", app, 9090)
	e.pod("other", map[string]string{"app": "other"}, 8080)

	t.Run("a pod without an IP is no endpoint", func(t *testing.T) {
		time.Sleep(50 * time.Millisecond)
		e.waitEndpoints("web")
	})

	t.Run("a pod with an IP is an endpoint before it is ready, ready=false", func(t *testing.T) {
		e.status("web-a", "127.1.0.2", false)
		e.status("other", "127.1.0.9", true)
		e.waitEndpoints("web", "web-a 127.1.0.2:8080 false/false/false")
	})

	t.Run("a ready pod is ready, and named target ports resolve per pod", func(t *testing.T) {
		e.status("web-a", "127.1.0.2", true)
		e.status("web-b", "127.1.0.3", true)
		e.waitEndpoints("web", "web-a 127.1.0.2:8080 true/true/false", "web-b 127.1.0.3:9090 true/true/false")
		if n := len(e.slices("web")); n != 2 {
			t.Fatalf("%d slices for two port mappings, want 2", n)
		}
	})

	t.Run("endpoints carry node name, zone and target reference", func(t *testing.T) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}}}
		if _, err := e.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.status("web-a", "127.1.0.2", false) // any change resyncs
		e.status("web-a", "127.1.0.2", true)
		wait(t, "the zone on web-a's endpoint", func() bool {
			for _, s := range e.slices("web") {
				for _, ep := range s.Endpoints {
					if ep.TargetRef.Name == "web-a" && ep.Zone != nil && *ep.Zone == "zone-a" {
						if *ep.NodeName != "node-1" || ep.TargetRef.Kind != "Pod" || ep.TargetRef.Namespace != "web" || ep.TargetRef.UID == "" {
							t.Fatalf("endpoint %+v", ep)
						}
						return true
					}
				}
			}
			return false
		})
	})

	t.Run("a deleted pod is terminating, not ready but serving, until it goes", func(t *testing.T) {
		if err := e.cs.CoreV1().Pods(e.ns).Delete(ctx, "web-b", metav1.DeleteOptions{GracePeriodSeconds: new(int64(30))}); err != nil {
			t.Fatal(err)
		}
		e.waitEndpoints("web", "web-a 127.1.0.2:8080 true/true/false", "web-b 127.1.0.3:9090 false/true/true")
		if err := e.cs.CoreV1().Pods(e.ns).Delete(ctx, "web-b", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
			t.Fatal(err)
		}
		e.waitEndpoints("web", "web-a 127.1.0.2:8080 true/true/false")
		wait(t, "the emptied slice deleted", func() bool { return len(e.slices("web")) == 1 })
	})

	t.Run("a pod whose labels stop matching leaves", func(t *testing.T) {
		p, err := e.cs.CoreV1().Pods(e.ns).Get(ctx, "web-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels = map[string]string{"app": "moved"}
		if _, err := e.cs.CoreV1().Pods(e.ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitEndpoints("web")
		wait(t, "the placeholder back", func() bool {
			s := e.slices("web")
			return len(s) == 1 && len(s[0].Endpoints) == 0
		})
	})

	t.Run("a Service without a selector is left alone", func(t *testing.T) {
		e.service("manual", nil, intstr.FromInt32(80))
		time.Sleep(200 * time.Millisecond)
		if n := len(e.slices("manual")); n != 0 {
			t.Fatalf("%d slices for a Service without selector", n)
		}
	})

	t.Run("a deleted Service's slices go", func(t *testing.T) {
		if err := e.cs.CoreV1().Services(e.ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "no slices for web", func() bool { return len(e.slices("web")) == 0 })
	})
}

func TestSlicesHoldAtMost100Endpoints(t *testing.T) {
	e := start(t)
	app := map[string]string{"app": "big"}
	e.service("big", app, intstr.FromInt32(8080))
	const n = 250
	for i := range n {
		name := fmt.Sprintf("big-%03d", i)
		e.pod(name, app, 8080)
		e.status(name, fmt.Sprintf("127.2.%d.%d", i/200, i%200+1), true)
	}
	wait(t, fmt.Sprintf("%d endpoints", n), func() bool { return len(e.endpoints("big")) == n })
	slices := e.slices("big")
	if len(slices) != 3 {
		t.Fatalf("%d slices for %d endpoints, want 3", len(slices), n)
	}
	for _, s := range slices {
		if len(s.Endpoints) > endpointslice.MaxEndpointsPerSlice {
			t.Fatalf("slice %s holds %d endpoints", s.Name, len(s.Endpoints))
		}
	}
}
