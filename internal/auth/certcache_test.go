package auth

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"
	"time"

	"minik/internal/pki"
)

// clientRequest is a request over TLS presenting kp's certificate.
func clientRequest(t *testing.T, kp pki.KeyPair) *http.Request {
	t.Helper()
	c, err := kp.TLS()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1/api", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
	return r
}

func TestClientCertAuthenticatorRemembersOnlyVerifiedChains(t *testing.T) {
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := NewClientCertAuthenticator(ca.Pool())
	good, err := ca.SignClient("alice", []string{"devs"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second answer comes from the cache
		u, ok, err := a.Authenticate(clientRequest(t, good))
		if err != nil || !ok || u.Name != "alice" {
			t.Fatalf("request %d: got %v, %v, %v; want alice", i, u, ok, err)
		}
	}
	if n := len(a.verified.entries); n != 1 {
		t.Fatalf("remembered %d chains, want 1", n)
	}
	foreign, err := other.SignClient("mallory", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // a chain that failed is checked again, and fails again
		if _, ok, err := a.Authenticate(clientRequest(t, foreign)); err == nil || ok {
			t.Fatalf("request %d with another CA's certificate: ok=%v err=%v, want an error", i, ok, err)
		}
	}
	if n := len(a.verified.entries); n != 1 {
		t.Fatalf("remembered %d chains after failures, want 1", n)
	}
}

func TestVerifiedChainExpiresWithItsCertificate(t *testing.T) {
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	chain := []*x509.Certificate{{Raw: []byte("leaf"), NotAfter: now.Add(10 * time.Second)}}
	var v verifiedCerts
	d := chainDigest(chain)
	v.remember(d, chain, now)
	if !v.verified(d, now.Add(5*time.Second)) {
		t.Fatal("chain not remembered before its certificate expires")
	}
	if v.verified(d, now.Add(11*time.Second)) {
		t.Fatal("chain remembered after its certificate expired")
	}
	long := []*x509.Certificate{{Raw: []byte("long"), NotAfter: now.Add(24 * time.Hour)}}
	d = chainDigest(long)
	v.remember(d, long, now)
	if v.verified(d, now.Add(maxVerifiedAge+time.Second)) {
		t.Fatal("chain remembered longer than maxVerifiedAge")
	}
}
