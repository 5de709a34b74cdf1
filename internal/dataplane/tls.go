package dataplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// certStore picks a serving certificate by SNI: an exact host, then a
// wildcard one ("*.example.com"), then the certificate of a TLS entry
// listing no hosts, then the proxy's self-signed default.
type certStore struct {
	exact    map[string]*tls.Certificate
	wildcard map[string]*tls.Certificate
	hostless *tls.Certificate
	def      *tls.Certificate
}

func newCertStore(def *tls.Certificate) *certStore {
	return &certStore{exact: map[string]*tls.Certificate{}, wildcard: map[string]*tls.Certificate{}, def: def}
}

// add serves cert for hosts; the first certificate given for a host wins.
func (s *certStore) add(hosts []string, cert *tls.Certificate) {
	if len(hosts) == 0 {
		if s.hostless == nil {
			s.hostless = cert
		}
		return
	}
	for _, h := range hosts {
		h = strings.ToLower(h)
		m := s.exact
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			m, h = s.wildcard, rest
		}
		if _, taken := m[h]; !taken {
			m[h] = cert
		}
	}
}

func (s *certStore) get(serverName string) *tls.Certificate {
	name := strings.TrimSuffix(strings.ToLower(serverName), ".")
	if c, ok := s.exact[name]; ok {
		return c
	}
	if _, rest, ok := strings.Cut(name, "."); ok {
		if c, ok := s.wildcard[rest]; ok {
			return c
		}
	}
	if s.hostless != nil {
		return s.hostless
	}
	return s.def
}

// defaultCertCN names the self-signed certificate served when no Secret
// matches, as ingress-nginx's "fake certificate" does.
const defaultCertCN = "minik ingress default certificate"

// selfSigned makes the proxy's default certificate.
func selfSigned() (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("default certificate key: %w", err)
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: defaultCertCN, Organization: []string{"minik"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"ingress.local"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("default certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("default certificate: %w", err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// merge adds other's certificates for the hosts s lacks.
func (s *certStore) merge(other *certStore) {
	for h, c := range other.exact {
		if _, ok := s.exact[h]; !ok {
			s.exact[h] = c
		}
	}
	for h, c := range other.wildcard {
		if _, ok := s.wildcard[h]; !ok {
			s.wildcard[h] = c
		}
	}
	if s.hostless == nil {
		s.hostless = other.hostless
	}
}
