package tables

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
)

// certificates.k8s.io tables, with kube's columns. kube describes the
// CertificateSigningRequest columns from the v1beta1 types' docs; so
// does minik.

// CertificateSigningRequest is kube's CSR printer: the signer, the
// requesting user, the requested duration and the condition summary
// ("Pending", "Approved,Issued", "Denied", with ",Failed" when failed).
var CertificateSigningRequest = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		ageColumn(),
		col("SignerName", "string", certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]),
		col("Requestor", "string", certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]),
		col("RequestedDuration", "string", certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]),
		col("Condition", "string", certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
	},
	func(csr *certificatesv1.CertificateSigningRequest, now time.Time) []interface{} {
		requested := "<none>"
		if e := csr.Spec.ExpirationSeconds; e != nil {
			requested = duration.HumanDuration(time.Duration(*e) * time.Second)
		}
		return []interface{}{csr.Name, age(csr.CreationTimestamp, now), orNone(csr.Spec.SignerName), csr.Spec.Username, requested, CSRCondition(csr)}
	},
)

// CSRCondition is kubectl's summary of a CSR's conditions.
func CSRCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

// ClusterTrustBundle is kube's ClusterTrustBundle printer: the name and
// signer ("<none>" for a bundle of no signer); no age.
var ClusterTrustBundle = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("SignerName", "string", certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
	},
	func(b *certificatesv1.ClusterTrustBundle, _ time.Time) []interface{} {
		return []interface{}{b.Name, orNone(b.Spec.SignerName)}
	},
)

var pcrSpecDoc = certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()

// PodCertificateRequest is kube's PodCertificateRequest printer: the
// pod, service account, node and signer, the state (the last of Issued,
// Denied and Failed among the conditions, else Pending) and the user
// annotations. kube gives the last column priority 0 but fills it only
// when wide, which the API server's tables always are.
var PodCertificateRequest = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("PodName", "string", pcrSpecDoc["podName"]),
		col("ServiceAccountName", "string", pcrSpecDoc["serviceAccountName"]),
		col("NodeName", "string", pcrSpecDoc["nodeName"]),
		col("SignerName", "string", pcrSpecDoc["signerName"]),
		col("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
		col("UnverifiedUserAnnotations", "string", pcrSpecDoc["unverifiedUserAnnotations"]),
	},
	func(r *certificatesv1.PodCertificateRequest, _ time.Time) []interface{} {
		state := "Pending"
		for _, c := range r.Status.Conditions {
			switch c.Type {
			case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
				state = c.Type
			}
		}
		return []interface{}{r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, state, labels.FormatLabels(r.Spec.UnverifiedUserAnnotations)}
	},
)
