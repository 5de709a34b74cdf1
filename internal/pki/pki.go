// Package pki creates and loads the certificate authority, the API server's
// serving certificate and client certificates that minikd keeps in its data
// dir.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority able to sign certificates.
type CA struct {
	// Cert is the CA certificate.
	Cert *x509.Certificate
	// CertPEM is Cert, PEM-encoded.
	CertPEM []byte
	key     crypto.Signer
}

// KeyPair is a certificate and its private key, PEM-encoded.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// TLS returns the pair as a tls.Certificate.
func (k KeyPair) TLS() (tls.Certificate, error) {
	return tls.X509KeyPair(k.CertPEM, k.KeyPEM)
}

// LoadOrCreateCA loads the CA from dir/ca.crt and dir/ca.key, creating and
// saving a new one when neither exists.
func LoadOrCreateCA(dir string) (*CA, error) {
	return LoadOrCreateNamedCA(dir, "ca", "minik-ca")
}

// Front-proxy names, as kubeadm names them: the CA that signs the client
// certificate the API server presents when it proxies a request to an
// extension API server (kube-apiserver's --requestheader-client-ca-file),
// and that certificate's files and common name (--proxy-client-cert-file,
// the one name --requestheader-allowed-names allows).
const (
	FrontProxyCAName     = "front-proxy-ca"
	FrontProxyClientName = "front-proxy-client"
)

// LoadOrCreateFrontProxy loads, or creates and saves, the front-proxy CA
// (dir/front-proxy-ca.crt and .key) and its client certificate for
// FrontProxyClientName (dir/front-proxy-client.crt and .key).
func LoadOrCreateFrontProxy(dir string) (*CA, KeyPair, error) {
	ca, err := LoadOrCreateNamedCA(dir, FrontProxyCAName, "minik-front-proxy-ca")
	if err != nil {
		return nil, KeyPair{}, err
	}
	kp, err := ca.LoadOrCreateClient(dir, FrontProxyClientName, FrontProxyClientName, nil)
	if err != nil {
		return nil, KeyPair{}, err
	}
	return ca, kp, nil
}

// LoadOrCreateNamedCA loads the CA from dir/NAME.crt and dir/NAME.key,
// creating and saving a new one with the given common name when neither
// exists.
func LoadOrCreateNamedCA(dir, name, commonName string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	kp, err := load(certPath, keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		return createCA(certPath, keyPath, commonName)
	}
	if err != nil {
		return nil, err
	}
	return parseCA(kp)
}

func createCA(certPath, keyPath, commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("pki: self-sign CA: %w", err)
	}
	kp, err := encode(der, key)
	if err != nil {
		return nil, err
	}
	if err := save(certPath, keyPath, kp); err != nil {
		return nil, err
	}
	return parseCA(kp)
}

func parseCA(kp KeyPair) (*CA, error) {
	pair, err := kp.TLS()
	if err != nil {
		return nil, fmt.Errorf("pki: parse CA: %w", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("pki: parse CA certificate: %w", err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("pki: CA key cannot sign")
	}
	return &CA{Cert: cert, CertPEM: kp.CertPEM, key: signer}, nil
}

// Pool returns a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// LoadOrCreateServing loads dir/NAME.crt and dir/NAME.key, or signs and saves
// a serving certificate for the given hosts (IP addresses or DNS names) when
// they do not exist or do not cover the hosts.
func (ca *CA) LoadOrCreateServing(dir, name string, hosts []string) (KeyPair, error) {
	certPath, keyPath := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	kp, err := load(certPath, keyPath)
	if err == nil && covers(kp, hosts) {
		return kp, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return KeyPair{}, err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "minik-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	kp, err = ca.sign(tmpl)
	if err != nil {
		return KeyPair{}, err
	}
	return kp, save(certPath, keyPath, kp)
}

// LoadOrCreateClient loads dir/NAME.crt and dir/NAME.key, or signs and saves
// a client certificate for user (CN) and groups (O) when they do not exist.
func (ca *CA) LoadOrCreateClient(dir, name, user string, groups []string) (KeyPair, error) {
	certPath, keyPath := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	kp, err := load(certPath, keyPath)
	if err == nil {
		return kp, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return KeyPair{}, err
	}
	kp, err = ca.SignClient(user, groups, 0)
	if err != nil {
		return KeyPair{}, err
	}
	return kp, save(certPath, keyPath, kp)
}

// SignClient signs a client certificate for user (CN) and groups (O) valid
// for ttl (zero: one year), without saving it.
func (ca *CA) SignClient(user string, groups []string, ttl time.Duration) (KeyPair, error) {
	if ttl == 0 {
		ttl = 365 * 24 * time.Hour
	}
	return ca.signFor(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ttl)
}

// Sign issues a certificate from tmpl for the public key pub, signed by
// the CA, and returns its DER. tmpl is used as it is: its serial number,
// validity and usages are the caller's.
func (ca *CA) Sign(tmpl *x509.Certificate, pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.key)
	if err != nil {
		return nil, fmt.Errorf("pki: sign certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	return der, nil
}

func (ca *CA) sign(tmpl *x509.Certificate) (KeyPair, error) {
	return ca.signFor(tmpl, 5*365*24*time.Hour)
}

func (ca *CA) signFor(tmpl *x509.Certificate, ttl time.Duration) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("pki: generate key for %s: %w", tmpl.Subject.CommonName, err)
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(ttl)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("pki: sign certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	return encode(der, key)
}

func covers(kp KeyPair, hosts []string) bool {
	pair, err := kp.TLS()
	if err != nil {
		return false
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || time.Now().After(cert.NotAfter) {
		return false
	}
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func encode(der []byte, key *ecdsa.PrivateKey) (KeyPair, error) {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("pki: encode key: %w", err)
	}
	return KeyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
	}, nil
}

func load(certPath, keyPath string) (KeyPair, error) {
	c, err := os.ReadFile(certPath)
	if err != nil {
		return KeyPair{}, fmt.Errorf("pki: read %s: %w", certPath, err)
	}
	k, err := os.ReadFile(keyPath)
	if err != nil {
		return KeyPair{}, fmt.Errorf("pki: read %s: %w", keyPath, err)
	}
	return KeyPair{CertPEM: c, KeyPEM: k}, nil
}

func save(certPath, keyPath string, kp KeyPair) error {
	if err := os.MkdirAll(filepath.Dir(certPath), 0o700); err != nil {
		return fmt.Errorf("pki: create %s: %w", filepath.Dir(certPath), err)
	}
	if err := WriteFileAtomic(keyPath, kp.KeyPEM, 0o600); err != nil {
		return err
	}
	return WriteFileAtomic(certPath, kp.CertPEM, 0o644)
}

// WriteFileAtomic writes data to a temporary file beside path and renames
// it into place, so readers see either the old file or the whole new one.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
