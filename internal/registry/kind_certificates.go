package registry

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/auth"
	"minik/internal/tables"
)

// This file holds certificates.k8s.io/v1 as kube v1.37 serves it by
// default: CertificateSigningRequests (with /status and /approval),
// ClusterTrustBundles and PodCertificateRequests (both GA in v1.37).
// v1beta1 and v1alpha1 are off in kube by default and not served.
// The approval, signing and cleaning controllers live in
// internal/controllers/certificates; the admission plugins that check
// the approve, sign and attest verbs in internal/admission.

// certificatesV1 is certificates.k8s.io/v1.
var certificatesV1 = schema.GroupVersion{Group: "certificates.k8s.io", Version: "v1"}

// writableViewVerbs are the verbs of a subresource that is a view of its
// object.
var writableViewVerbs = metav1.Verbs{"get", "patch", "update"}

// ---- CertificateSigningRequest ----

// certificateSigningRequests: the spec is fixed at creation, and its
// requestor fields (username, uid, groups, extra) come from whoever
// creates it. The approval conditions change only through /approval;
// the certificate and other conditions only through /status. No
// generation is kept.
var certificateSigningRequests = &Resource{
	GroupVersion: certificatesV1, Name: "certificatesigningrequests", SingularName: "certificatesigningrequest", Kind: "CertificateSigningRequest",
	ShortNames: []string{"csr"}, HasStatus: true,
	Subresources: []Subresource{
		{Name: "approval", Kind: "CertificateSigningRequest", Verbs: writableViewVerbs, Update: &SubresourceStrategy{
			Merge: mergeCSRApproval,
			ValidateUpdate: updateValidator(func(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
				opts := csrValidationOptions(csr, old)
				opts.allowSettingApprovalConditions = true
				return validateCSRUpdate(csr, old, opts)
			}),
		}},
	},
	Strategy: Strategy{
		PrepareForCreate: prepareCSRCreate,
		PrepareForUpdate: updater(func(csr, old *certificatesv1.CertificateSigningRequest) {
			csr.Spec, csr.Status = old.Spec, old.Status
		}),
		Validate: validator(func(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
			return validateCSR(csr, csrValidationOptions(csr, nil))
		}),
		ValidateUpdate: updateValidator(func(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
			return validateCSRUpdate(csr, old, csrValidationOptions(csr, old))
		}),
		Status: &SubresourceStrategy{
			Merge: mergeCSRStatus,
			ValidateUpdate: updateValidator(func(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
				opts := csrValidationOptions(csr, old)
				opts.allowSettingCertificate = true
				return validateCSRUpdate(csr, old, opts)
			}),
		},
		NoGeneration: true,
		Fields: selectable(func(csr *certificatesv1.CertificateSigningRequest) fields.Set {
			return fields.Set{"spec.signerName": csr.Spec.SignerName}
		}),
		Table: tables.CertificateSigningRequest.Convertor(nil),
	},
}

// prepareCSRCreate records the requesting user in the spec, whatever the
// client sent, and starts with an empty status.
func prepareCSRCreate(ctx context.Context, obj runtime.Object) {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return
	}
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u := auth.UserFrom(ctx); u != nil {
		csr.Spec.Username, csr.Spec.UID = u.Name, u.UID
		csr.Spec.Groups = append([]string(nil), u.Groups...)
		if len(u.Extra) > 0 {
			csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
			for k, v := range u.Extra {
				csr.Spec.Extra[k] = append(certificatesv1.ExtraValue(nil), v...)
			}
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
}

// mergeCSRStatus is kube's CSR status strategy: the sent status over the
// stored object, with the stored Approved and Denied conditions kept
// (when their number did not change) and missing condition times filled.
func mergeCSRStatus(current, sent runtime.Object) runtime.Object {
	cur, ok := current.(*certificatesv1.CertificateSigningRequest)
	in, ok2 := sent.(*certificatesv1.CertificateSigningRequest)
	if !ok || !ok2 {
		return current
	}
	old := cur.DeepCopy()
	cur.Status = *in.Status.DeepCopy()
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		oldIdx, newIdx := csrConditionIndices(old, t), csrConditionIndices(cur, t)
		if len(oldIdx) != len(newIdx) {
			continue
		}
		for i, oi := range oldIdx {
			cur.Status.Conditions[newIdx[i]] = old.Status.Conditions[oi]
		}
	}
	populateCSRConditionTimes(cur, old)
	return cur
}

// mergeCSRApproval is kube's CSR approval strategy: only the sent
// conditions change, their missing times filled.
func mergeCSRApproval(current, sent runtime.Object) runtime.Object {
	cur, ok := current.(*certificatesv1.CertificateSigningRequest)
	in, ok2 := sent.(*certificatesv1.CertificateSigningRequest)
	if !ok || !ok2 {
		return current
	}
	next := in.DeepCopy()
	populateCSRConditionTimes(next, cur)
	cur.Status.Conditions = next.Status.Conditions
	return cur
}

func csrConditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// populateCSRConditionTimes sets a condition's missing lastUpdateTime to
// now and its missing lastTransitionTime to the stored condition's of the
// same type and status, or now.
func populateCSRConditionTimes(csr, old *certificatesv1.CertificateSigningRequest) {
	now := metav1.Now()
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range old.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}

// csrOptions are kube's certificateValidationOptions: what an update may
// do, and what stored data is tolerated.
type csrOptions struct {
	allowSettingApprovalConditions bool
	allowSettingCertificate        bool
	allowBothApprovedAndDenied     bool
	allowLegacySignerName          bool
	allowDuplicateConditionTypes   bool
	allowEmptyConditionType        bool
	allowArbitraryCertificate      bool
	allowUnknownUsages             bool
	allowDuplicateUsages           bool
}

// csrValidationOptions tolerates in an update what the stored object
// already has, as kube's getValidationOptions.
func csrValidationOptions(csr, old *certificatesv1.CertificateSigningRequest) csrOptions {
	if old == nil {
		return csrOptions{}
	}
	var o csrOptions
	approved, denied := false, false
	seen := map[certificatesv1.RequestConditionType]bool{}
	for _, c := range old.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case "":
			o.allowEmptyConditionType = true
		}
		if seen[c.Type] {
			o.allowDuplicateConditionTypes = true
		}
		seen[c.Type] = true
	}
	o.allowBothApprovedAndDenied = approved && denied
	o.allowLegacySignerName = old.Spec.SignerName == legacyUnknownSignerName
	o.allowArbitraryCertificate = bytes.Equal(csr.Status.Certificate, old.Status.Certificate) || validateCertificatePEM(old.Status.Certificate) != nil
	usages := map[certificatesv1.KeyUsage]bool{}
	for _, u := range old.Spec.Usages {
		if !csrUsages.Has(string(u)) {
			o.allowUnknownUsages = true
		}
		if usages[u] {
			o.allowDuplicateUsages = true
		}
		usages[u] = true
	}
	return o
}

// legacyUnknownSignerName is the signer of v1beta1 CSRs that named none;
// certificates.k8s.io/v1 does not accept it.
const legacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// csrUsages are the key usages a CSR may ask for.
var csrUsages = sets.New(
	"signing", "digital signature", "content commitment", "key encipherment", "key agreement",
	"data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
	"server auth", "client auth", "code signing", "email protection", "s/mime",
	"ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
	"microsoft sgc", "netscape sgc",
)

var (
	csrTrueOnlyConditions = sets.New(certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed)
	conditionStatuses     = sets.New(string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown))
	conditionTrueOnly     = sets.New(string(corev1.ConditionTrue))
	statusPath            = field.NewPath("status")
)

// ParseCSRRequest parses a CSR's spec.request: one PEM block of type
// CERTIFICATE REQUEST, as kube's certificates.ParseCSR.
func ParseCSRRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// validateCSR is kube's validateCertificateSigningRequest.
func validateCSR(csr *certificatesv1.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	errs := validateObjectMeta(&csr.ObjectMeta, false, func(string, bool) []string { return nil })
	req, err := ParseCSRRequest(csr.Spec.Request)
	if err == nil {
		err = req.CheckSignature()
	}
	if err != nil {
		errs = append(errs, field.Invalid(specPath.Child("request"), csr.Spec.Request, err.Error()))
	}
	up := specPath.Child("usages")
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(up, ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range csr.Spec.Usages {
		if !opts.allowUnknownUsages && !csrUsages.Has(string(u)) {
			errs = append(errs, field.NotSupported(up.Index(i), u, sets.List(csrUsages)))
		}
		if !opts.allowDuplicateUsages && seen[u] {
			errs = append(errs, field.Duplicate(up.Index(i), u))
		}
		seen[u] = true
	}
	sp := specPath.Child("signerName")
	if !opts.allowLegacySignerName && csr.Spec.SignerName == legacyUnknownSignerName {
		errs = append(errs, field.Invalid(sp, csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, ValidateSignerName(sp, csr.Spec.SignerName)...)
	}
	if e := csr.Spec.ExpirationSeconds; e != nil && *e < 600 {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), *e, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(csr, opts)...)
	if !opts.allowArbitraryCertificate {
		if err := validateCertificatePEM(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(statusPath.Child("certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

func validateCSRConditions(csr *certificatesv1.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	var errs field.ErrorList
	cp := statusPath.Child("conditions")
	seen := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range csr.Status.Conditions {
		ip := cp.Index(i)
		if !opts.allowEmptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(ip.Child("type"), ""))
		}
		allowed := conditionStatuses
		if csrTrueOnlyConditions.Has(c.Type) {
			allowed = conditionTrueOnly
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(ip.Child("status"), ""))
		case !allowed.Has(string(c.Status)):
			errs = append(errs, field.NotSupported(ip.Child("status"), c.Status, sets.List(allowed)))
		}
		if !opts.allowBothApprovedAndDenied {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				approved = true
				if denied {
					errs = append(errs, field.Invalid(cp, c.Type, "Approved and Denied conditions are mutually exclusive"))
				}
			case certificatesv1.CertificateDenied:
				denied = true
				if approved {
					errs = append(errs, field.Invalid(cp, c.Type, "Approved and Denied conditions are mutually exclusive"))
				}
			}
		}
		if !opts.allowDuplicateConditionTypes {
			if seen[c.Type] {
				errs = append(errs, field.Duplicate(ip.Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
	}
	return errs
}

// validateCSRUpdate is kube's validateCertificateSigningRequestUpdate:
// the terminal conditions are never removed, the approval conditions
// change only through /approval, and the certificate is set once,
// through /status.
func validateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	errs := validateCSR(csr, opts)
	cp := statusPath.Child("conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(csrConditions(csr, t)) < len(csrConditions(old, t)) {
			errs = append(errs, field.Forbidden(cp, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !opts.allowSettingApprovalConditions {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oc, nc := csrConditions(old, t), csrConditions(csr, t)
			switch {
			case len(nc) < len(oc):
			case len(nc) > len(oc):
				errs = append(errs, field.Forbidden(cp, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !apiequality.Semantic.DeepEqual(oc, nc):
				errs = append(errs, field.Forbidden(cp, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, diff.Diff(oc, nc))))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		cert := statusPath.Child("certificate")
		switch {
		case !opts.allowSettingCertificate:
			errs = append(errs, field.Forbidden(cert, "updates may not set certificate content"))
		case len(old.Status.Certificate) > 0:
			errs = append(errs, field.Forbidden(cert, "updates may not modify existing certificate content"))
		}
	}
	return append(errs, validateObjectMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta)...)
}

func csrConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// validateCertificatePEM is kube's validateCertificate: empty, or only
// CERTIFICATE blocks without headers, each holding certificates.
func validateCertificatePEM(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// IsKubernetesSignerName tells whether a signer name is one the
// Kubernetes project reserves (kubernetes.io or a subdomain of it).
func IsKubernetesSignerName(signerName string) bool {
	host, _, _ := strings.Cut(signerName, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// ValidateSignerName is kube's ValidateSignerName: a signer is named
// "example.com/signer-name", a domain of at least two DNS labels and a
// path of DNS subdomains, at most 571 characters in all.
func ValidateSignerName(p *field.Path, signerName string) field.ErrorList {
	if signerName == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	segments := strings.Split(signerName, "/")
	if len(segments) != 2 {
		return field.ErrorList{field.Invalid(p, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	maxDomain := validation.DNS1123SubdomainMaxLength
	if len(segments[0]) > maxDomain {
		errs = append(errs, field.TooLong(p, "", maxDomain))
	}
	domainLabels := strings.Split(segments[0], ".")
	for _, l := range domainLabels {
		if msgs := validation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(p, segments[0], fmt.Sprintf("validating label %q: %s", l, msg)))
			}
			break
		}
	}
	if len(domainLabels) < 2 {
		errs = append(errs, field.Invalid(p, segments[0], "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(segments[1], ".") {
		if msgs := validation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(p, segments[1], fmt.Sprintf("validating label %q: %s", l, msg)))
			}
			break
		}
	}
	maxName := maxDomain + validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1 + 1
	if len(signerName) > maxName {
		errs = append(errs, field.TooLong(p, "", maxName))
	}
	return errs
}

// ---- ClusterTrustBundle ----

// maxTrustBundleSize is kube's limit on spec.trustBundle.
const maxTrustBundleSize = 1 << 20

// clusterTrustBundles: a bundle of CA certificates, linked to a signer
// (then named "<signer with : for />:<name>" and its signer fixed) or
// not. The attest check on the signer is the ClusterTrustBundleAttest
// admission plugin's. No generation is kept.
var clusterTrustBundles = &Resource{
	GroupVersion: certificatesV1, Name: "clustertrustbundles", SingularName: "clustertrustbundle", Kind: "ClusterTrustBundle",
	Strategy: Strategy{
		Validate: validator(func(b *certificatesv1.ClusterTrustBundle) field.ErrorList {
			return validateClusterTrustBundle(b, true)
		}),
		ValidateUpdate: updateValidator(func(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
			errs := validateClusterTrustBundle(b, b.Spec.TrustBundle != old.Spec.TrustBundle)
			errs = append(errs, validateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta)...)
			return append(errs, validateImmutable(b.Spec.SignerName, old.Spec.SignerName, specPath.Child("signerName"))...)
		}),
		NoGeneration: true,
		Fields: selectable(func(b *certificatesv1.ClusterTrustBundle) fields.Set {
			return fields.Set{"spec.signerName": b.Spec.SignerName}
		}),
		Table: tables.ClusterTrustBundle.Convertor(nil),
	},
}

// validateClusterTrustBundle is kube's ValidateClusterTrustBundle; the
// bundle is parsed only when it is new or changed.
func validateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle, parse bool) field.ErrorList {
	errs := validateObjectMeta(&b.ObjectMeta, false, clusterTrustBundleName(b.Spec.SignerName))
	if b.Spec.SignerName != "" {
		errs = append(errs, ValidateSignerName(specPath.Child("signerName"), b.Spec.SignerName)...)
	}
	if parse {
		errs = append(errs, validateTrustBundle(specPath.Child("trustBundle"), b.Spec.TrustBundle)...)
	}
	return errs
}

// clusterTrustBundleName is kube's ValidateClusterTrustBundleName.
func clusterTrustBundleName(signerName string) apivalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signerName == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apivalidation.NameIsDNSSubdomain(name, prefix)
		}
		required := strings.ReplaceAll(signerName, "/", ":") + ":"
		if !strings.HasPrefix(name, required) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, required)}
		}
		return apivalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, required), prefix)
	}
}

// validateTrustBundle is kube's validateTrustBundle: CERTIFICATE blocks
// without headers, each a CA certificate, at least one, none twice.
func validateTrustBundle(p *field.Path, in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "", maxTrustBundleSize)}
	}
	var errs field.ErrorList
	const omitted = "<value omitted>"
	seen := map[string][]int{}
	var order []string
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d has bad block type: %v", i, b.Type)))
			continue
		}
		if len(b.Headers) != 0 {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d has PEM block headers", i)))
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d does not parse as X.509", i)))
			continue
		}
		if !cert.IsCA {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d does not have the CA bit set", i)))
			continue
		}
		if !cert.BasicConstraintsValid {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d has invalid basic constraints", i)))
			continue
		}
		if _, ok := seen[string(b.Bytes)]; !ok {
			order = append(order, string(b.Bytes))
		}
		seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
	}
	if len(errs) > 0 {
		return errs
	}
	if len(seen) == 0 {
		errs = append(errs, field.Invalid(p, omitted, "at least one trust anchor must be provided"))
	}
	for _, k := range order {
		if idx := seen[k]; len(idx) > 1 {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return errs
}
