package certificates

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"sort"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/controllers"
	"minik/internal/pki"
	"minik/internal/registry"
)

// Signing durations, as kube's.
const (
	// ClusterSigningDuration is the longest certificate the signer
	// issues (kube-controller-manager's --cluster-signing-duration
	// default).
	ClusterSigningDuration = 365 * 24 * time.Hour
	// minSigningDuration is the shortest it issues.
	minSigningDuration = 10 * time.Minute
	// backdate is how far before now a certificate starts, for clocks
	// that lag; shortTTL is the lifetime below which the backdating is
	// added to the lifetime rather than taken from it.
	backdate = 5 * time.Minute
	shortTTL = 8 * time.Hour
)

// signerChecks are the signers the controller issues for, each with its
// check of the request: an error fails the CSR with its message.
var signerChecks = map[string]func(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error{
	certificatesv1.KubeletServingSignerName: func(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
		return validateKubeletServingCSR(req, usageSet(usages))
	},
	certificatesv1.KubeAPIServerClientKubeletSignerName: func(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
		return validateKubeletClientCSR(req, usageSet(usages))
	},
	certificatesv1.KubeAPIServerClientSignerName: func(_ *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
		return validAPIServerClientUsages(usages)
	},
	"kubernetes.io/legacy-unknown": func(*x509.CertificateRequest, []certificatesv1.KeyUsage) error { return nil },
}

// NewSigning builds the csrsigning controller, signing with the
// context's ClusterSigner. Without one it only waits, as kube skips the
// controller without a signing certificate and key. It has the
// controllers.Constructor signature.
func NewSigning(cc *controllers.Context) (controllers.Controller, error) {
	if cc == nil {
		return nil, fmt.Errorf("%s: a controller context is required", SigningName)
	}
	if cc.ClusterSigner == nil {
		if cc.Logger != nil {
			cc.Logger.Info("Skipping CSR signer controller because no csr cert/key was specified")
		}
		return idle{}, nil
	}
	s := &signer{client: cc.Client, ca: cc.ClusterSigner, ttl: ClusterSigningDuration}
	return newCSRController(SigningName, cc, s.handle)
}

type idle struct{}

func (idle) Run(ctx context.Context, _ int) { <-ctx.Done() }

type signer struct {
	client client
	ca     *pki.CA
	ttl    time.Duration
}

func (s *signer) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	approved, denied := approval(csr)
	if !approved || denied || hasTrueCondition(csr, certificatesv1.CertificateFailed) {
		return nil
	}
	check, ok := signerChecks[csr.Spec.SignerName]
	if !ok {
		return nil
	}
	req, err := registry.ParseCSRRequest(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %w", csr.Name, err)
	}
	if err := check(req, csr.Spec.Usages); err != nil {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure",
			Message: err.Error(), LastUpdateTime: metav1.Now(),
		})
		if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error adding failure condition for csr %q: %w", csr.Name, err)
		}
		return nil
	}
	cert, err := s.sign(req, csr.Spec.Usages, csr.Spec.ExpirationSeconds, time.Now())
	if err != nil {
		return fmt.Errorf("error auto signing csr %q: %w", csr.Name, err)
	}
	csr.Status.Certificate = cert
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("error updating signature for csr %q: %w", csr.Name, err)
	}
	return nil
}

// duration is the lifetime of the certificate for a request of
// expirationSeconds: the maximum when unset, else it bounded to
// [10m, maximum].
func (s *signer) duration(expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return s.ttl
	}
	return min(max(time.Duration(*expirationSeconds)*time.Second, minSigningDuration), s.ttl)
}

// sign is kube's CertificateAuthority.Sign with its permissive policy:
// the request's subject and names, the CSR's usages, backdated by five
// minutes, and never beyond the CA's own expiry.
func (s *signer) sign(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, expirationSeconds *int32, now time.Time) ([]byte, error) {
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %w", req.Subject.CommonName, err)
	}
	keyUsage, extUsages, err := keyUsages(usages)
	if err != nil {
		return nil, err
	}
	ttl := s.duration(expirationSeconds)
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: req.Subject,
		DNSNames: req.DNSNames, IPAddresses: req.IPAddresses, EmailAddresses: req.EmailAddresses, URIs: req.URIs,
		PublicKeyAlgorithm: req.PublicKeyAlgorithm, PublicKey: req.PublicKey,
		KeyUsage: keyUsage, ExtKeyUsage: extUsages, BasicConstraintsValid: true,
		NotBefore: now.Add(-backdate),
	}
	if ttl < shortTTL {
		tmpl.NotAfter = now.Add(ttl)
	} else {
		tmpl.NotAfter = now.Add(ttl - backdate)
	}
	caEnd := s.ca.Cert.NotAfter
	if !tmpl.NotAfter.Before(caEnd) {
		tmpl.NotAfter = caEnd
	}
	if !tmpl.NotBefore.Before(caEnd) {
		return nil, fmt.Errorf("the signer has expired: NotAfter=%v", caEnd)
	}
	if !now.Before(caEnd) {
		return nil, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", caEnd)
	}
	der, err := s.ca.Sign(tmpl, req.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// validAPIServerClientUsages is kube's check of a
// kube-apiserver-client CSR: client auth, with at most digital
// signature and key encipherment besides.
func validAPIServerClientUsages(usages []certificatesv1.KeyUsage) error {
	hasClientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			hasClientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

var keyUsageBits = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certificatesv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certificatesv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certificatesv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign:          x509.KeyUsageCertSign,
	certificatesv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certificatesv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsages = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny:             x509.ExtKeyUsageAny,
	certificatesv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certificatesv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certificatesv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certificatesv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// keyUsages is kube's keyUsagesFromStrings: the key usage bits and the
// sorted distinct extended usages.
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var bits x509.KeyUsage
	var unrecognized []certificatesv1.KeyUsage
	ext := map[x509.ExtKeyUsage]bool{}
	for _, u := range usages {
		if b, ok := keyUsageBits[u]; ok {
			bits |= b
		} else if e, ok := extKeyUsages[u]; ok {
			ext[e] = true
		} else {
			unrecognized = append(unrecognized, u)
		}
	}
	if len(unrecognized) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unrecognized)
	}
	sorted := make([]x509.ExtKeyUsage, 0, len(ext))
	for e := range ext {
		sorted = append(sorted, e)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return bits, sorted, nil
}
