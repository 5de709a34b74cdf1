package registry

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// Limits of kube's PodCertificateRequest validation.
const (
	maxStubPKCS10RequestSize          = 10 * 1024
	maxCertificateChainSize           = 100 * 1024
	minMaxExpirationSeconds           = 60 * 60
	maxMaxExpirationSeconds           = 91 * 24 * 60 * 60
	kubernetesMaxMaxExpirationSeconds = 24 * 60 * 60
)

// podCertificateRequests: a kubelet's request, on behalf of a pod, for a
// certificate from a signer. The spec is fixed at creation; the signer
// writes the status through /status, once, to Issued, Denied or Failed.
// That the writer may "sign" for the signer is checked by the
// CertificateSigning admission plugin (kube checks it in the status
// strategy, with the same message). No controller signs them in minik.
var podCertificateRequests = &Resource{
	GroupVersion: certificatesV1, Name: "podcertificaterequests", SingularName: "podcertificaterequest", Kind: "PodCertificateRequest",
	Namespaced: true, HasStatus: true,
	Strategy: Strategy{
		PrepareForUpdate: updater(func(r, old *certificatesv1.PodCertificateRequest) { r.Status = old.Status }),
		Validate:         validator(validatePodCertificateRequest),
		ValidateUpdate: updateValidator(func(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
			errs := validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
			return append(errs, validateImmutable(r.Spec, old.Spec, specPath)...)
		}),
		Status: &SubresourceStrategy{
			Merge: func(current, sent runtime.Object) runtime.Object {
				cur, ok := current.(*certificatesv1.PodCertificateRequest)
				in, ok2 := sent.(*certificatesv1.PodCertificateRequest)
				if ok && ok2 {
					cur.Status = *in.Status.DeepCopy()
				}
				return current
			},
			ValidateUpdate: updateValidator(func(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
				return validatePCRStatusUpdate(r, old, time.Now())
			}),
		},
		NoGeneration: true,
		Fields: selectable(func(r *certificatesv1.PodCertificateRequest) fields.Set {
			return fields.Set{"spec.signerName": r.Spec.SignerName, "spec.podName": r.Spec.PodName, "spec.nodeName": string(r.Spec.NodeName)}
		}),
		Table: tables.PodCertificateRequest.Convertor(nil),
	},
}

var (
	pkcs10ReqPath    = specPath.Child("stubPKCS10Request")
	certChainPath    = statusPath.Child("certificateChain")
	notBeforePath    = statusPath.Child("notBefore")
	notAfterPath     = statusPath.Child("notAfter")
	beginRefreshPath = statusPath.Child("beginRefreshAt")
)

// validatePodCertificateRequest is kube's
// ValidatePodCertificateRequestCreate for the v1 fields.
func validatePodCertificateRequest(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	errs := validateObjectMeta(&r.ObjectMeta, true, nameIsDNSSubdomain)
	s := &r.Spec
	errs = append(errs, ValidateSignerName(specPath.Child("signerName"), s.SignerName)...)
	if s.UnverifiedUserAnnotations != nil {
		ap := specPath.Child("unverifiedUserAnnotations")
		for k := range s.UnverifiedUserAnnotations {
			errs = append(errs, validation.IsDomainPrefixedKey(ap, strings.ToLower(k))...)
		}
		if err := apivalidation.ValidateAnnotationsSize(s.UnverifiedUserAnnotations); err != nil {
			errs = append(errs, field.TooLong(ap, "", apivalidation.TotalAnnotationSizeLimitB))
		}
	}
	for _, n := range []struct {
		name, value string
		uidName     string
		uid         string
	}{
		{"podName", s.PodName, "podUID", string(s.PodUID)},
		{"serviceAccountName", s.ServiceAccountName, "serviceAccountUID", string(s.ServiceAccountUID)},
		{"nodeName", string(s.NodeName), "nodeUID", string(s.NodeUID)},
	} {
		errs = append(errs, validateName(n.value, nameIsDNSSubdomain, false, specPath.Child(n.name))...)
		if n.uid == "" {
			errs = append(errs, field.Invalid(specPath.Child(n.uidName), n.uid, "must not be empty"))
		}
		if len(n.uid) > 128 {
			errs = append(errs, field.TooLong(specPath.Child(n.uidName), n.uid, 128))
		}
	}
	mp := specPath.Child("maxExpirationSeconds")
	if s.MaxExpirationSeconds == nil {
		return append(errs, field.Required(mp, "must be set"))
	}
	upper := int32(maxMaxExpirationSeconds)
	if IsKubernetesSignerName(s.SignerName) {
		upper = kubernetesMaxMaxExpirationSeconds
	}
	if e := *s.MaxExpirationSeconds; e < minMaxExpirationSeconds || e > upper {
		errs = append(errs, field.Invalid(mp, s.MaxExpirationSeconds, fmt.Sprintf("must be in the range [%d, %d]", minMaxExpirationSeconds, upper)))
	}
	if len(s.StubPKCS10Request) == 0 {
		return append(errs, field.Invalid(specPath, field.OmitValueType{}, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	}
	return append(errs, validateStubPKCS10Request(s.StubPKCS10Request)...)
}

func validateStubPKCS10Request(der []byte) field.ErrorList {
	if len(der) > maxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(pkcs10ReqPath, der, maxStubPKCS10RequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := req.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

var pcrTerminalConditions = []string{certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed}

func pcrHas(r *certificatesv1.PodCertificateRequest, t string) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == t && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

func pcrSettled(r *certificatesv1.PodCertificateRequest) bool {
	for _, t := range pcrTerminalConditions {
		if pcrHas(r, t) {
			return true
		}
	}
	return false
}

func semanticallyEqual(a, b any, p *field.Path, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(a, b) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, field.OmitValueType{}, detail)}
}

// validatePCRStatusUpdate is kube's
// ValidatePodCertificateRequestStatusUpdate, now being the API server's
// clock.
func validatePCRStatusUpdate(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	if errs := validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	known := 0
	for i, c := range r.Status.Conditions {
		ip := statusPath.Child("conditions", "["+strconv.Itoa(i)+"]", "type")
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			known++
			if known > 1 {
				errs = append(errs, field.Invalid(ip, c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(statusPath.Child("conditions", "["+strconv.Itoa(i)+"]", "status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(ip, c.Type, pcrTerminalConditions))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(r.Status.Conditions, statusPath.Child("conditions"))...)
	if len(errs) > 0 {
		return errs
	}
	if pcrSettled(old) {
		return semanticallyEqual(r.Status, old.Status, statusPath, "immutable after PodCertificateRequest is issued, denied, or failed")
	}
	if pcrHas(r, certificatesv1.PodCertificateRequestConditionTypeDenied) || pcrHas(r, certificatesv1.PodCertificateRequestConditionTypeFailed) {
		want := certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions}
		return semanticallyEqual(r.Status, want, statusPath, "non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	}
	if pcrHas(r, certificatesv1.PodCertificateRequestConditionTypeIssued) {
		return validatePCRIssued(r, old, now)
	}
	return semanticallyEqual(r.Status, old.Status, statusPath, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// validatePCRIssued checks an issued certificate chain against the
// request: the leaf is for the requested key, its times are the status's
// and near now, and it lives between an hour and maxExpirationSeconds.
func validatePCRIssued(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	st := &r.Status
	if len(st.CertificateChain) > maxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, st.CertificateChain, maxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(st.CertificateChain))
	if leafBlock == nil {
		return field.ErrorList{field.Invalid(certChainPath, st.CertificateChain, "issued certificate chain must contain at least one certificate")}
	}
	if leafBlock.Type != "CERTIFICATE" {
		return field.ErrorList{field.Invalid(certChainPath, st.CertificateChain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(certChainPath, st.CertificateChain, "leaf certificate does not parse as valid X.509")}
	}
	var errs field.ErrorList
	for _, n := range leaf.DNSNames {
		if n == "" {
			errs = append(errs, field.Invalid(certChainPath, n, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(n, "..") {
			errs = append(errs, field.Invalid(certChainPath, n, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".") {
			errs = append(errs, field.Invalid(certChainPath, n, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, a := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(a); err != nil {
			errs = append(errs, field.Invalid(certChainPath, a, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	req, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return append(errs, field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR"))
	}
	if pk, ok := req.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && !pk.Equal(leaf.PublicKey) {
		return append(errs, field.Invalid(certChainPath, st.CertificateChain, "leaf certificate was not issued to the requested public key"))
	}
	if st.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	switch lifetime := leaf.NotAfter.Sub(leaf.NotBefore); {
	case !st.NotBefore.Time.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(notBeforePath, st.NotBefore.Time, "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(st.NotBefore.Time.After(now.Add(-5*time.Minute)) && st.NotBefore.Time.Before(now.Add(5*time.Minute))):
		return field.ErrorList{field.Invalid(notBeforePath, st.NotBefore.Time, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !st.NotAfter.Time.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(notAfterPath, st.NotAfter.Time, "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case lifetime > time.Duration(*r.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *r.Spec.MaxExpirationSeconds))}
	case st.BeginRefreshAt.Before(&metav1.Time{Time: st.NotBefore.Add(10 * time.Minute)}):
		return field.ErrorList{field.Invalid(beginRefreshPath, st.BeginRefreshAt.Time, "must be at least 10 minutes after status.notBefore")}
	case st.BeginRefreshAt.After(st.NotAfter.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, st.BeginRefreshAt.Time, "must be at least 10 minutes before status.notAfter")}
	}
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			// kube's message has this misspelling.
			return field.ErrorList{field.Invalid(certChainPath, st.CertificateChain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(certChainPath, st.CertificateChain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}
