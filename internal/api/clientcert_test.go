package api_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/pki"
	"minik/internal/testserver"
)

func TestClientCertificates(t *testing.T) {
	srv := testserver.Start(t)
	ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(srv.RESTConfig.CAData)
	get := func(t *testing.T, kp pki.KeyPair) (int, string) {
		t.Helper()
		cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + srv.Addr + "/api/v1/namespaces")
		if err != nil {
			t.Fatalf("request failed (a TLS alert?): %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	unauthorized := func(t *testing.T, code int, body string) {
		t.Helper()
		var st metav1.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if code != http.StatusUnauthorized || st.Reason != metav1.StatusReasonUnauthorized || st.Message != "Unauthorized" {
			t.Fatalf("got %d %s, want kube's 401 Unauthorized", code, body)
		}
	}

	t.Run("an expired certificate of the cluster's CA gets 401 Unauthorized", func(t *testing.T) {
		kp, err := ca.SignClient("minik-admin", []string{"system:masters"}, -time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		code, body := get(t, kp)
		unauthorized(t, code, body)
	})
	t.Run("a certificate of another CA gets 401 Unauthorized", func(t *testing.T) {
		kp, err := other.SignClient("minik-admin", []string{"system:masters"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		code, body := get(t, kp)
		unauthorized(t, code, body)
	})
	t.Run("a valid certificate is its user", func(t *testing.T) {
		kp, err := ca.SignClient("minik-admin", []string{"system:masters"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if code, body := get(t, kp); code != http.StatusOK {
			t.Fatalf("got %d %s", code, body)
		}
	})
}
