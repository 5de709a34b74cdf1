package certificates

import (
	"context"
	"crypto/x509"
	"fmt"
	"reflect"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"minik/internal/controllers"
	"minik/internal/registry"
)

// recognizer is one kind of CSR the approver knows, the permission its
// requestor needs for it to be approved, and the approval's message.
type recognizer struct {
	recognize  func(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool
	permission authorizationv1.ResourceAttributes
	message    string
}

var recognizers = []recognizer{
	{
		recognize:  isSelfNodeClientCert,
		permission: authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create", Subresource: "selfnodeclient", Version: "*"},
		message:    "Auto approving self kubelet client certificate after SubjectAccessReview.",
	},
	{
		recognize:  isNodeClientCert,
		permission: authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create", Subresource: "nodeclient", Version: "*"},
		message:    "Auto approving kubelet client certificate after SubjectAccessReview.",
	},
}

// NewApproving builds the csrapproving controller. It has the
// controllers.Constructor signature.
func NewApproving(cc *controllers.Context) (controllers.Controller, error) {
	if cc == nil {
		return nil, fmt.Errorf("%s: a controller context is required", ApprovingName)
	}
	a := &approver{client: cc.Client}
	return newCSRController(ApprovingName, cc, a.handle)
}

type approver struct{ client client }

func (a *approver) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if approved, denied := approval(csr); approved || denied {
		return nil
	}
	req, err := registry.ParseCSRRequest(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %w", csr.Name, err)
	}
	var tried []string
	for _, r := range recognizers {
		if !r.recognize(csr, req) {
			continue
		}
		tried = append(tried, r.permission.Subresource)
		allowed, err := a.authorize(ctx, csr, r.permission)
		if err != nil {
			return err
		}
		if !allowed {
			continue
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved", Message: r.message,
		})
		if _, err := a.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error updating approval for csr %q: %w", csr.Name, err)
		}
		return nil
	}
	if len(tried) > 0 {
		return ignorable(fmt.Sprintf("recognized csr %q as %v but subject access review was not approved", csr.Name, tried))
	}
	return nil
}

// authorize asks whether the CSR's requestor has the permission.
func (a *approver) authorize(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, attrs authorizationv1.ResourceAttributes) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra, ResourceAttributes: &attrs,
	}}
	sar, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("subject access review for csr %q: %w", csr.Name, err)
	}
	return sar.Status.Allowed, nil
}

func isNodeClientCert(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && validateKubeletClientCSR(req, usageSet(csr.Spec.Usages)) == nil
}

func isSelfNodeClientCert(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.Username == req.Subject.CommonName && isNodeClientCert(csr, req)
}

func usageSet(usages []certificatesv1.KeyUsage) sets.Set[string] {
	s := sets.New[string]()
	for _, u := range usages {
		s.Insert(string(u))
	}
	return s
}

// The usages kube's kubelet signers require: with or without key
// encipherment (which only RSA keys use).
var (
	kubeletClientUsages       = sets.New("digital signature", "key encipherment", "client auth")
	kubeletClientUsagesNoRSA  = sets.New("digital signature", "client auth")
	kubeletServingUsages      = sets.New("digital signature", "key encipherment", "server auth")
	kubeletServingUsagesNoRSA = sets.New("digital signature", "server auth")
)

// Kube's reasons a CSR is not what its kubelet signer issues.
var (
	errOrganizationNotSystemNodes = fmt.Errorf("subject organization is not system:nodes")
	errCommonNameNotSystemNode    = fmt.Errorf("subject common name does not begin with system:node:")
	errDNSOrIPSANRequired         = fmt.Errorf("DNS or IP subjectAltName is required")
	errDNSSANNotAllowed           = fmt.Errorf("DNS subjectAltNames are not allowed")
	errEmailSANNotAllowed         = fmt.Errorf("Email subjectAltNames are not allowed")
	errIPSANNotAllowed            = fmt.Errorf("IP subjectAltNames are not allowed")
	errURISANNotAllowed           = fmt.Errorf("URI subjectAltNames are not allowed")
)

// validateKubeletClientCSR is kube's ValidateKubeletClientCSR.
func validateKubeletClientCSR(req *x509.CertificateRequest, usages sets.Set[string]) error {
	switch {
	case !reflect.DeepEqual([]string{"system:nodes"}, req.Subject.Organization):
		return errOrganizationNotSystemNodes
	case len(req.DNSNames) > 0:
		return errDNSSANNotAllowed
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.IPAddresses) > 0:
		return errIPSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errCommonNameNotSystemNode
	case !usages.Equal(kubeletClientUsages) && !usages.Equal(kubeletClientUsagesNoRSA):
		return fmt.Errorf("usages did not match %v", sets.List(kubeletClientUsages))
	}
	return nil
}

// validateKubeletServingCSR is kube's ValidateKubeletServingCSR.
func validateKubeletServingCSR(req *x509.CertificateRequest, usages sets.Set[string]) error {
	switch {
	case !reflect.DeepEqual([]string{"system:nodes"}, req.Subject.Organization):
		return errOrganizationNotSystemNodes
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return errDNSOrIPSANRequired
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	case !usages.Equal(kubeletServingUsages) && !usages.Equal(kubeletServingUsagesNoRSA):
		return fmt.Errorf("usages did not match %v", sets.List(kubeletServingUsages))
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errCommonNameNotSystemNode
	}
	return nil
}
