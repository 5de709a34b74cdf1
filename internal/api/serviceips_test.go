package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/api"
	"minik/internal/auth"
	"minik/internal/storage"
	"minik/internal/testserver"
	"minik/internal/version"
)

func service(name string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Port: 80}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func withClusterIP(ip string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.ClusterIP = ip }
}

func nodePort(port int32) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = port
	}
}

var defaultRange = netip.MustParsePrefix(api.DefaultServiceClusterIPRange)

func TestServiceClusterIPs(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	ctx := context.Background()
	svcs := cs.CoreV1().Services("default")

	t.Run("the kubernetes Service has the range's first address and points at the API server", func(t *testing.T) {
		k, err := svcs.Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := strings.Cut(srv.Addr, ":")
		if k.Spec.ClusterIP != "127.96.0.1" || len(k.Spec.Ports) != 1 || k.Spec.Ports[0].Port != 443 ||
			k.Spec.Ports[0].Name != "https" || k.Spec.Ports[0].TargetPort.String() != port {
			t.Fatalf("kubernetes service: clusterIP %s ports %+v", k.Spec.ClusterIP, k.Spec.Ports)
		}
		slice, err := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(slice.Endpoints) != 1 || slice.Endpoints[0].Addresses[0] != "127.0.0.1" || strconv.Itoa(int(*slice.Ports[0].Port)) != port {
			t.Fatalf("kubernetes endpointslice: %+v %+v", slice.Endpoints, slice.Ports)
		}
	})

	t.Run("a Service without a clusterIP gets one from the range", func(t *testing.T) {
		s, err := svcs.Create(ctx, service("auto"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip, err := netip.ParseAddr(s.Spec.ClusterIP)
		if err != nil || !defaultRange.Contains(ip) || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != s.Spec.ClusterIP {
			t.Fatalf("clusterIP %q clusterIPs %v", s.Spec.ClusterIP, s.Spec.ClusterIPs)
		}
		if len(s.Spec.IPFamilies) != 1 || s.Spec.IPFamilies[0] != corev1.IPv4Protocol {
			t.Fatalf("ipFamilies %v", s.Spec.IPFamilies)
		}
	})

	t.Run("a requested IP is honoured once and refused with kube's message after", func(t *testing.T) {
		if _, err := svcs.Create(ctx, service("first", withClusterIP("127.96.1.10")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := svcs.Create(ctx, service("second", withClusterIP("127.96.1.10")), metav1.CreateOptions{})
		want := `Service "second" is invalid: spec.clusterIPs: Invalid value: ["127.96.1.10"]: failed to allocate IP 127.96.1.10: provided IP is already allocated`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	})

	t.Run("an IP outside the range is refused", func(t *testing.T) {
		_, err := svcs.Create(ctx, service("outside", withClusterIP("10.0.0.10")), metav1.CreateOptions{})
		want := `Service "outside" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.10"]: failed to allocate IP 10.0.0.10: the provided IP (10.0.0.10) is not in the valid range. The range of valid IPs is 127.96.0.0/12`
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	})

	t.Run("deleting a Service releases its IP", func(t *testing.T) {
		if _, err := svcs.Create(ctx, service("gone", withClusterIP("127.96.1.11")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := svcs.Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := svcs.Create(ctx, service("again", withClusterIP("127.96.1.11")), metav1.CreateOptions{}); err != nil {
			t.Fatalf("the IP of a deleted Service is not free: %v", err)
		}
	})

	t.Run("a failed create releases what it allocated", func(t *testing.T) {
		bad := service("bad-node-port", withClusterIP("127.96.1.12"), nodePort(30000+1))
		bad.Spec.Ports = append(bad.Spec.Ports, corev1.ServicePort{Name: "b", Port: 81, NodePort: 20})
		bad.Spec.Ports[0].Name = "a"
		if _, err := svcs.Create(ctx, bad, metav1.CreateOptions{}); err == nil {
			t.Fatal("a node port outside the range was accepted")
		} else if want := `spec.ports[1].nodePort: Invalid value: 20: provided port is not in the valid range. The range of valid ports is 30000-32767`; !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %s", err, want)
		}
		if _, err := svcs.Create(ctx, service("good", withClusterIP("127.96.1.12"), nodePort(30001)), metav1.CreateOptions{}); err != nil {
			t.Fatalf("the failed create kept its allocations: %v", err)
		}
	})

	t.Run("a headless Service gets no IP", func(t *testing.T) {
		s, err := svcs.Create(ctx, service("headless", withClusterIP("None")), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Spec.ClusterIP != "None" || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != "None" {
			t.Fatalf("clusterIP %q clusterIPs %v", s.Spec.ClusterIP, s.Spec.ClusterIPs)
		}
	})

	t.Run("a dry run reserves nothing", func(t *testing.T) {
		s, err := svcs.Create(ctx, service("dry", withClusterIP("127.96.1.13")), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil || s.Spec.ClusterIP != "127.96.1.13" {
			t.Fatalf("dry run: %v %v", s, err)
		}
		if _, err := svcs.Create(ctx, service("wet", withClusterIP("127.96.1.13")), metav1.CreateOptions{}); err != nil {
			t.Fatalf("the dry run reserved its IP: %v", err)
		}
	})

	t.Run("a dual-stack requirement is refused on a single-stack cluster", func(t *testing.T) {
		s := service("dual")
		policy := corev1.IPFamilyPolicyRequireDualStack
		s.Spec.IPFamilyPolicy = &policy
		_, err := svcs.Create(ctx, s, metav1.CreateOptions{})
		want := `Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	})
}

func TestServiceNodePorts(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	ctx := context.Background()
	svcs := cs.CoreV1().Services("default")

	t.Run("a NodePort Service gets a port from the range", func(t *testing.T) {
		s, err := svcs.Create(ctx, service("np", nodePort(0)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p := s.Spec.Ports[0].NodePort; p < 30000 || p > 32767 {
			t.Fatalf("nodePort %d", p)
		}
	})

	t.Run("a requested node port is refused once taken", func(t *testing.T) {
		if _, err := svcs.Create(ctx, service("np-a", nodePort(30080)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := svcs.Create(ctx, service("np-b", nodePort(30080)), metav1.CreateOptions{})
		want := `Service "np-b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	})

	t.Run("TCP and UDP on one port number share a node port", func(t *testing.T) {
		s := service("dns", nodePort(0))
		s.Spec.Ports = []corev1.ServicePort{{Name: "tcp", Port: 53}, {Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP}}
		out, err := svcs.Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.Ports[0].NodePort == 0 || out.Spec.Ports[0].NodePort != out.Spec.Ports[1].NodePort {
			t.Fatalf("node ports %d and %d", out.Spec.Ports[0].NodePort, out.Spec.Ports[1].NodePort)
		}
	})

	t.Run("changing the type to ClusterIP releases the node port, back to NodePort allocates", func(t *testing.T) {
		s, err := svcs.Create(ctx, service("flip", nodePort(30090)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Spec.Type = corev1.ServiceTypeClusterIP
		s.Spec.Ports[0].NodePort = 0
		s.Spec.ExternalTrafficPolicy = ""
		if s, err = svcs.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := svcs.Create(ctx, service("takes-30090", nodePort(30090)), metav1.CreateOptions{}); err != nil {
			t.Fatalf("the node port was not released: %v", err)
		}
		s.Spec.Type = corev1.ServiceTypeNodePort
		if s, err = svcs.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if p := s.Spec.Ports[0].NodePort; p < 30000 || p == 30090 {
			t.Fatalf("nodePort %d after the type went back to NodePort", p)
		}
	})
}

func TestServiceAllocationsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	srv := testserver.StartIn(t, dir)
	ctx := context.Background()
	first, err := srv.Client(t).CoreV1().Services("default").Create(ctx, service("kept", nodePort(0)), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()

	srv = testserver.StartIn(t, dir)
	svcs := srv.Client(t).CoreV1().Services("default")
	_, err = svcs.Create(ctx, service("thief", withClusterIP(first.Spec.ClusterIP)), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "provided IP is already allocated") {
		t.Fatalf("the IP of a Service created before the restart was given again: %v", err)
	}
	_, err = svcs.Create(ctx, service("port-thief", nodePort(first.Spec.Ports[0].NodePort)), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "provided port is already allocated") {
		t.Fatalf("the node port of a Service created before the restart was given again: %v", err)
	}
}

// mastersAuthenticator makes every request an admin's.
type mastersAuthenticator struct{}

func (mastersAuthenticator) Authenticate(*http.Request) (*auth.User, bool, error) {
	return &auth.User{Name: "admin", Groups: []string{auth.GroupMasters}}, true, nil
}

// secondAPIServer serves a second API server over the test server's etcd,
// as a second minikd sharing it would.
func secondAPIServer(t *testing.T, srv *testserver.Server, cidr string) kubernetes.Interface {
	t.Helper()
	a, err := api.New(api.Config{
		Store:                 storage.New(srv.Etcd),
		Authenticators:        []auth.Authenticator{mastersAuthenticator{}},
		Authorizers:           []auth.Authorizer{auth.MastersAuthorizer{}},
		Version:               api.VersionInfo{GitVersion: version.Kubernetes},
		ServiceClusterIPRange: netip.MustParsePrefix(cidr),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(a)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(func() { a.Stop(); hs.Close() })
	cfg := &rest.Config{Host: hs.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestServiceAllocationIsRaceFreeAcrossAPIServers(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	// A /27 holds 30 addresses; the bootstrap Services (kubernetes,
	// kube-dns) hold some. Two API servers race 40 creates for the rest.
	const cidr = "127.96.0.0/27"
	clients := []kubernetes.Interface{secondAPIServer(t, srv, cidr), secondAPIServer(t, srv, cidr)}
	existing, err := clients[0].CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prefix := netip.MustParsePrefix(cidr)
	free := 30
	for _, s := range existing.Items {
		if ip, err := netip.ParseAddr(s.Spec.ClusterIP); err == nil && prefix.Contains(ip) {
			free--
		}
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		got  = map[string]string{}
		full int
	)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("race-%d", i)
			s, err := clients[i%2].CoreV1().Services("default").Create(ctx, service(name), metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if !strings.Contains(err.Error(), "range is full") {
					t.Errorf("create %s: %v", name, err)
				}
				full++
				return
			}
			if other, dup := got[s.Spec.ClusterIP]; dup {
				t.Errorf("%s and %s both got %s", name, other, s.Spec.ClusterIP)
			}
			got[s.Spec.ClusterIP] = name
		}()
	}
	wg.Wait()
	if len(got) != free || full != 40-free {
		t.Fatalf("%d Services got an IP and %d found the range full; want %d and %d", len(got), full, free, 40-free)
	}
}
