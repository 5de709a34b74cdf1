package runtime

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// testCert makes a certificate and key (PEM) for a name.
func testCert(t *testing.T, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
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

// getTLS fetches a URL over TLS without verifying (as a probe does) and
// returns the status, body and the certificate's common name.
func getTLS(t *testing.T, url string) (int, string, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test of the server's side
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.TLS.PeerCertificates[0].Subject.CommonName
}

func TestServersAnswerHTTPS(t *testing.T) {
	rt := New(Config{Speed: 1000})

	t.Run("metrics-server serves HTTPS with a self-signed certificate", func(t *testing.T) {
		port := freePort(t)
		_, logs := startOn(t, rt, ContainerSpec{Image: "registry.k8s.io/metrics-server/metrics-server:v0.8.0", Args: []string{"--secure-port=" + port, "--kubelet-insecure-tls"}})
		code, _, cn := getTLS(t, "https://127.0.0.1:"+port+"/livez")
		if code != 200 || !strings.HasPrefix(cn, "web-1@") {
			t.Fatalf("status %d, certificate %q", code, cn)
		}
		// Plain HTTP gets Go's TLS server's answer, as kube's servers give.
		if resp, err := http.Get("http://127.0.0.1:" + port + "/livez"); err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP on a TLS port: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		if !strings.Contains(strings.Join(logs.get(), "\n"), "Serving securely on [::]:"+port) {
			t.Fatalf("logs %q", logs.get())
		}
	})

	certPEM, keyPEM := testCert(t, "web.demo.svc")
	secret := NewVolume(map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM}, true)

	t.Run("a server given a Secret's certificate serves it", func(t *testing.T) {
		port := freePort(t)
		startOn(t, rt, ContainerSpec{Image: "registry.k8s.io/metrics-server/metrics-server:v0.8.0",
			Args:   []string{"--secure-port=" + port, "--tls-cert-file=/certs/tls.crt", "--tls-private-key-file=/certs/tls.key"},
			Mounts: []Mount{{Path: "/certs", Volume: secret}}})
		if code, _, cn := getTLS(t, "https://127.0.0.1:"+port+"/readyz"); code != 200 || cn != "web.demo.svc" {
			t.Fatalf("status %d, certificate %q", code, cn)
		}
	})

	t.Run("nginx serves the ports of its configuration, listen ssl over TLS", func(t *testing.T) {
		plain, secure := freePort(t), freePort(t)
		conf := NewVolume(map[string][]byte{"default.conf": []byte(`
server {
    listen ` + plain + `;   # plain
    listen ` + secure + ` ssl;
    ssl_certificate     /etc/nginx/certs/tls.crt;
    ssl_certificate_key /etc/nginx/certs/tls.key;
}`)}, true)
		c, _ := startOn(t, rt, ContainerSpec{Image: "nginx:1.27", Mounts: []Mount{{Path: "/etc/nginx/conf.d", Volume: conf}, {Path: "/etc/nginx/certs", Volume: secret}}})
		if code, body, cn := getTLS(t, "https://127.0.0.1:"+secure+"/"); code != 200 || cn != "web.demo.svc" || !strings.Contains(body, "Welcome to nginx!") {
			t.Fatalf("status %d, certificate %q, body %q", code, cn, body)
		}
		resp, err := http.Get("http://127.0.0.1:" + plain + "/")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("plain port: %v", err)
		}
		resp.Body.Close()
		// wget in a container reaches an HTTPS backend.
		out, code, err := c.Exec(t.Context(), []string{"wget", "-qO-", "https://localhost:" + secure + "/"})
		if err != nil || code != 0 || !strings.Contains(string(out), "Welcome to nginx!") {
			t.Fatalf("wget https: %q %d %v", out, code, err)
		}
	})

	t.Run("nginx without its certificate fails as nginx does", func(t *testing.T) {
		conf := NewVolume(map[string][]byte{"default.conf": []byte("server { listen " + freePort(t) + " ssl; ssl_certificate /nope.crt; ssl_certificate_key /nope.key; }")}, true)
		c, logs := startOn(t, rt, ContainerSpec{Image: "nginx:1.27", Mounts: []Mount{{Path: "/etc/nginx/conf.d", Volume: conf}}})
		if e := waitDone(t, c); e.Code != 1 || !strings.Contains(strings.Join(logs.get(), "\n"), `nginx: [emerg] cannot load certificate "/nope.crt"`) {
			t.Fatalf("exit %+v, logs %q", e, logs.get())
		}
	})
}
