package aggregator

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"minik/internal/auth"
)

// TestProxyToABlackHoleTimesOut sends a request to an extension whose
// endpoint takes connections and never answers: the proxy gives up at
// its TLS handshake timeout with kube's 503, instead of holding the
// request (and its goroutines) for as long as the caller waits.
func TestProxyToABlackHoleTimesOut(t *testing.T) {
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	}()
	_, portStr, _ := net.SplitHostPort(hole.Addr().String())
	p, _ := strconv.Atoi(portStr)
	port32, ready, name := int32(p), true, "https"

	// Listers over stores holding the Service and its EndpointSlice, as
	// the informers would.
	svcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = svcs.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "wardle"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Name: name, Port: 443}}}})
	slices := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = slices.Add(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "api-1", Namespace: "wardle", Labels: map[string]string{discoveryv1.LabelServiceName: "api"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port32}},
	})
	a := New(Config{FrontProxy: tls.Certificate{}, TLSHandshakeTimeout: 200 * time.Millisecond, DiscoveryTimeout: 200 * time.Millisecond})
	a.services = corelisters.NewServiceLister(svcs)
	a.slices = discoverylisters.NewEndpointSliceLister(slices)
	as := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", InsecureSkipTLSVerify: true,
			Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"}},
	}
	r, err := a.remoteFor(as)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	r.available.Store(true)

	req := httptest.NewRequest(http.MethodGet, "/apis/wardle.example.com/v1alpha1/namespaces/wardle/flunders?watch=true", nil)
	req = req.WithContext(auth.WithUser(req.Context(), &auth.User{Name: "alice"}))
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "TLS handshake timeout") {
		t.Errorf("answer %d %q, want 503 with the handshake timeout", rec.Code, rec.Body.String())
	}

	r.available.Store(false)
	rec = httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || strings.TrimSpace(rec.Body.String()) != "service unavailable" {
		t.Errorf("answer of an unavailable APIService %d %q, want kube's 503 \"service unavailable\"", rec.Code, rec.Body.String())
	}
}

func TestSetIdentityReplacesTheCallersHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer x")
	h.Set("Impersonate-User", "root")
	h.Set("X-Remote-User", "mallory")
	h.Add("X-Remote-Group", "system:masters")
	h.Set("X-Remote-Extra-Foo", "bar")
	h.Set("Accept", "application/json")
	setIdentity(h, "alice", "42", []string{"devs", "system:authenticated"}, map[string][]string{"example.com/scope": {"a", "b"}})
	want := http.Header{
		"Accept": {"application/json"}, "X-Remote-User": {"alice"}, "X-Remote-Uid": {"42"},
		"X-Remote-Group": {"devs", "system:authenticated"}, "X-Remote-Extra-Example.com%2fscope": {"a", "b"},
	}
	for k, v := range want {
		if got := h.Values(k); strings.Join(got, ",") != strings.Join(v, ",") {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers = %v, want only %v", h, want)
	}
}

func TestABadCABundleIsServedAs500(t *testing.T) {
	a := New(Config{})
	as := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", CABundle: []byte("not PEM"),
			Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"}},
	}
	r, err := a.remoteFor(as)
	if err == nil || r == nil {
		t.Fatalf("remoteFor = %v, %v; want the remote and its error", r, err)
	}
	defer r.close()
	r.available.Store(true)
	if d := a.Delegation(); len(d.Versions) != 1 || !d.Versions[0].Stale {
		t.Errorf("delegation = %+v, want the version, stale", d)
	}
	req := httptest.NewRequest(http.MethodGet, "/apis/wardle.example.com/v1alpha1", nil)
	req = req.WithContext(auth.WithUser(req.Context(), &auth.User{Name: "alice"}))
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	if want := "unable to load root certificates: unable to parse bytes as PEM block"; rec.Code != http.StatusInternalServerError || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("answer %d %q, want 500 %q", rec.Code, rec.Body.String(), want)
	}
}
