package admission

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"reflect"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/auth"
)

// The certificates.k8s.io admission plugins kube-apiserver enables by
// default. Each asks the authorizer whether the requester may use a verb
// on the "signers" resource of certificates.k8s.io, named by the signer
// ("example.com/my-signer") or by its domain ("example.com/*").

const certificatesGroup = "certificates.k8s.io"

// AuthorizedForSigner is kube's IsAuthorizedForSignerName: whether u may
// verb ("approve", "sign", "attest") for signerName, by the signer's name
// or by its domain's wildcard.
func AuthorizedForSigner(ctx context.Context, authz auth.Authorizer, u *auth.User, verb, signerName string) bool {
	if authz == nil || u == nil {
		return false
	}
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		d, _, err := authz.Authorize(ctx, auth.Attributes{
			User: u, Verb: verb, IsResource: true, APIGroup: certificatesGroup, APIVersion: "*", Resource: "signers", Name: name,
		})
		if err == nil && d == auth.Allow {
			return true
		}
	}
	return false
}

func isCertificates(a *Attributes, resource string) bool {
	return a.Resource.Group == certificatesGroup && a.Resource.Resource == resource
}

// CertificateApproval is kube's plugin of that name: an update through
// certificatesigningrequests/approval needs "approve" on the CSR's signer.
type CertificateApproval struct {
	// Authorizer is the server's authorizer chain. Required.
	Authorizer auth.Authorizer
}

// Name implements Validator.
func (*CertificateApproval) Name() string { return "CertificateApproval" }

// Validate implements Validator.
func (p *CertificateApproval) Validate(ctx context.Context, a *Attributes) error {
	if a.Operation != Update || a.Subresource != "approval" || !isCertificates(a, "certificatesigningrequests") {
		return nil
	}
	csr, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	if !AuthorizedForSigner(ctx, p.Authorizer, a.User, "approve", csr.Spec.SignerName) {
		return NewForbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", csr.Spec.SignerName))
	}
	return nil
}

// CertificateSigning is kube's plugin of that name: an update through
// certificatesigningrequests/status that changes the certificate or the
// conditions needs "sign" on the CSR's signer. It also makes the check
// kube's PodCertificateRequest status strategy makes, with its 422
// answer: a status change of a PodCertificateRequest needs "sign" too.
type CertificateSigning struct {
	// Authorizer is the server's authorizer chain. Required.
	Authorizer auth.Authorizer
}

// Name implements Validator.
func (*CertificateSigning) Name() string { return "CertificateSigning" }

// Validate implements Validator.
func (p *CertificateSigning) Validate(ctx context.Context, a *Attributes) error {
	if a.Operation != Update || a.Subresource != "status" {
		return nil
	}
	switch {
	case isCertificates(a, "certificatesigningrequests"):
		old, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
		if !ok {
			return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
		}
		csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
		if !ok {
			return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
		}
		if reflect.DeepEqual(old.Status.Certificate, csr.Status.Certificate) && equality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
			return nil
		}
		if !AuthorizedForSigner(ctx, p.Authorizer, a.User, "sign", old.Spec.SignerName) {
			return NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
		}
	case isCertificates(a, "podcertificaterequests"):
		old, ok1 := a.OldObject.(*certificatesv1.PodCertificateRequest)
		req, ok2 := a.Object.(*certificatesv1.PodCertificateRequest)
		if !ok1 || !ok2 || equality.Semantic.DeepEqual(old.Status, req.Status) {
			return nil
		}
		if !AuthorizedForSigner(ctx, p.Authorizer, a.User, "sign", old.Spec.SignerName) {
			name := ""
			if a.User != nil {
				name = a.User.Name
			}
			return apierrors.NewInvalid(a.Kind.GroupKind(), a.Name, field.ErrorList{
				field.Forbidden(field.NewPath("spec", "signerName"), fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", name, old.Spec.SignerName)),
			})
		}
	}
	return nil
}

// CertificateSubjectRestriction is kube's plugin of that name: a CSR for
// the kubernetes.io/kube-apiserver-client signer may not ask for the
// system:masters group.
type CertificateSubjectRestriction struct{}

// Name implements Validator.
func (*CertificateSubjectRestriction) Name() string { return "CertificateSubjectRestriction" }

// Validate implements Validator.
func (*CertificateSubjectRestriction) Validate(_ context.Context, a *Attributes) error {
	if a.Operation != Create || a.Subresource != "" || !isCertificates(a, "certificatesigningrequests") {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", errors.New("PEM block type must be CERTIFICATE REQUEST")))
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	for _, g := range req.Subject.Organization {
		if g == auth.GroupMasters {
			return NewForbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName))
		}
	}
	return nil
}

// ClusterTrustBundleAttest is kube's plugin of that name: writing a
// ClusterTrustBundle linked to a signer needs "attest" on the signer,
// unless an update changes only owner references and finalizers.
type ClusterTrustBundleAttest struct {
	// Authorizer is the server's authorizer chain. Required.
	Authorizer auth.Authorizer
}

// Name implements Validator.
func (*ClusterTrustBundleAttest) Name() string { return "ClusterTrustBundleAttest" }

// Validate implements Validator.
func (p *ClusterTrustBundleAttest) Validate(ctx context.Context, a *Attributes) error {
	if (a.Operation != Create && a.Operation != Update) || !isCertificates(a, "clustertrustbundles") {
		return nil
	}
	b, ok := a.Object.(*certificatesv1.ClusterTrustBundle)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.OldObject))
	}
	if b.Spec.SignerName == "" {
		return nil
	}
	if a.Operation == Update && onlyGCFieldsChange(a.Object, a.OldObject) {
		return nil
	}
	if !AuthorizedForSigner(ctx, p.Authorizer, a.User, "attest", b.Spec.SignerName) {
		return NewForbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", b.Spec.SignerName))
	}
	return nil
}

// onlyGCFieldsChange tells whether an update changes nothing but owner
// references and finalizers (kube's rbac.IsOnlyMutatingGCFields).
func onlyGCFieldsChange(obj, old runtime.Object) bool {
	if obj == nil || old == nil {
		return false
	}
	copied := obj.DeepCopyObject()
	cm, err := meta.Accessor(copied)
	if err != nil {
		return false
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetManagedFields(om.GetManagedFields())
	cm.SetResourceVersion(om.GetResourceVersion())
	return equality.Semantic.DeepEqual(copied, old)
}
