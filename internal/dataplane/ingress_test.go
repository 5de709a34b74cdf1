package dataplane_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/dataplane"
)

func pathRule(path string, pt networkingv1.PathType, svc string) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{Path: path, PathType: &pt, Backend: networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}},
	}}
}

func (e *env) ingress(name string, spec networkingv1.IngressSpec) {
	e.t.Helper()
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if _, err := e.cs.NetworkingV1().Ingresses(e.ns).Create(context.Background(), ing, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func hostRule(host string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}}}
}

func TestIngress(t *testing.T) {
	for _, mode := range []string{dataplane.ModeService, dataplane.ModeDirect} {
		t.Run("in mode "+mode, func(t *testing.T) { testIngress(t, mode) })
	}
}

func testIngress(t *testing.T, mode string) {
	e := start(t, mode)
	ctx := context.Background()
	base := "http://" + e.srv.IngressHTTP
	e.pod("web-a", "web", true)
	b := e.pod("web-b", "web", true)
	e.pod("web-c", "web", true)
	e.pod("api-a", "api", true)
	e.service("web", "web")
	e.service("api", "api")
	e.service("empty", "nothing-runs-this")
	e.ingress("web", networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
		hostRule("web.demo.local",
			pathRule("/", networkingv1.PathTypePrefix, "web"),
			pathRule("/api", networkingv1.PathTypeExact, "api"),
			pathRule("/empty", networkingv1.PathTypePrefix, "empty")),
	}})
	waitAnsweredByAll(t, base+"/", "web.demo.local", "web-a", "web-b", "web-c")

	t.Run("the minik IngressClass is the default", func(t *testing.T) {
		var ic *networkingv1.IngressClass
		waitFor(t, "IngressClass minik", func() bool {
			var err error
			ic, err = e.cs.NetworkingV1().IngressClasses().Get(ctx, "minik", metav1.GetOptions{})
			return err == nil
		})
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] != "true" || ic.Spec.Controller != dataplane.IngressController {
			t.Fatalf("ingressclass %+v", ic)
		}
	})

	t.Run("the host is answered by each of the 3 pods in turn", func(t *testing.T) {
		got := tally(t, freshClient, 30, base+"/", "web.demo.local")
		if got["web-a"] != 10 || got["web-b"] != 10 || got["web-c"] != 10 {
			t.Fatalf("answers %v, want 10 each", got)
		}
	})

	t.Run("a keep-alive client is balanced per request too", func(t *testing.T) {
		got := tally(t, http.DefaultClient, 30, base+"/", "web.demo.local")
		if len(got) != 3 {
			t.Fatalf("answers %v, want all 3 pods", got)
		}
	})

	t.Run("paths follow Kubernetes' precedence", func(t *testing.T) {
		for path, want := range map[string]string{"/api": "api-a", "/api/": "web", "/apis": "web", "/x/y": "web"} {
			_, body, err := get(freshClient, base+path, "web.demo.local")
			if err != nil {
				t.Fatal(err)
			}
			if want == "web" && !strings.HasPrefix(body, "web-") || want != "web" && body != want {
				t.Errorf("%s answered by %q, want %s", path, body, want)
			}
		}
	})

	t.Run("a not-ready pod gets no request among hundreds", func(t *testing.T) {
		e.setReady("web-b", b.ip, false)
		waitFor(t, "web-b not ready", func() bool { r, n := e.readyEndpoints("web"); return r == 2 && n == 1 })
		time.Sleep(20 * time.Millisecond)
		before := b.hits.Load()
		got := tally(t, http.DefaultClient, 300, base+"/", "web.demo.local")
		if b.hits.Load() != before || got["web-a"]+got["web-c"] != 300 {
			t.Fatalf("the not-ready pod was sent requests: %v", got)
		}
		e.setReady("web-b", b.ip, true)
		waitAnswers(t, base+"/", "web.demo.local", "web-b")
	})

	t.Run("a backend without ready endpoints answers 503 with a clear body", func(t *testing.T) {
		code, body, err := get(freshClient, base+"/empty", "web.demo.local")
		if err != nil || code != 503 || body != "503 Service Unavailable: no ready endpoints for service demo/empty port 80" {
			t.Fatalf("got %d %q %v", code, body, err)
		}
	})

	t.Run("no matching rule answers 404", func(t *testing.T) {
		code, body, err := get(freshClient, base+"/", "other.local")
		if err != nil || code != 404 || body != `404 Not Found: no Ingress or HTTPRoute rule matches host "other.local" and path "/"` {
			t.Fatalf("got %d %q %v", code, body, err)
		}
	})

	t.Run("the Ingress status shows the proxy's address", func(t *testing.T) {
		waitFor(t, "status.loadBalancer", func() bool {
			ing, err := e.cs.NetworkingV1().Ingresses(e.ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && len(ing.Status.LoadBalancer.Ingress) == 1 && ing.Status.LoadBalancer.Ingress[0].IP == "127.0.0.1"
		})
	})

	t.Run("a defaultBackend takes what no rule matches", func(t *testing.T) {
		e.ingress("fallback", networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Name: "http"}},
		}})
		waitAnswers(t, base+"/", "other.local", "api-a")
	})

	t.Run("TLS is served from the Secret named by the Ingress, by SNI", func(t *testing.T) {
		certPEM, keyPEM := selfSignedPEM(t, "secure.demo.local")
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "secure-tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
		}
		if _, err := e.cs.CoreV1().Secrets(e.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.ingress("secure", networkingv1.IngressSpec{
			TLS:   []networkingv1.IngressTLS{{Hosts: []string{"secure.demo.local"}, SecretName: "secure-tls"}},
			Rules: []networkingv1.IngressRule{hostRule("secure.demo.local", pathRule("/", networkingv1.PathTypePrefix, "api"))},
		})
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(certPEM)
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "secure.demo.local"}}}
		waitFor(t, "https answered with the Secret's certificate", func() bool {
			code, body, err := get(c, "https://"+e.srv.IngressHTTPS+"/", "secure.demo.local")
			return err == nil && code == 200 && body == "api-a"
		})
	})
}

// selfSignedPEM makes a certificate and key for host.
func selfSignedPEM(t *testing.T, host string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}
