package tables

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fixtures of the certificates.k8s.io tables.

func csrFixtures() []runtime.Object {
	cond := func(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue}
	}
	return []runtime.Object{
		&certificatesv1.CertificateSigningRequest{ObjectMeta: clusterMeta("csr-pending", 5*time.Minute),
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice"}},
		&certificatesv1.CertificateSigningRequest{ObjectMeta: clusterMeta("csr-issued", time.Hour),
			Spec:   certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client-kubelet", Username: "system:node:node-1", ExpirationSeconds: ptrTo[int32](86400)},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved)}, Certificate: []byte("x")}},
		&certificatesv1.CertificateSigningRequest{ObjectMeta: clusterMeta("csr-denied-failed", 2*24*time.Hour),
			Spec:   certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/signer", Username: "bob", ExpirationSeconds: ptrTo[int32](600)},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateDenied), cond(certificatesv1.CertificateFailed)}}},
		&certificatesv1.CertificateSigningRequest{ObjectMeta: clusterMeta("csr-no-signer", time.Minute)},
	}
}

func clusterTrustBundleFixtures() []runtime.Object {
	return []runtime.Object{
		&certificatesv1.ClusterTrustBundle{ObjectMeta: clusterMeta("example.com:signer:roots", time.Hour), Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer"}},
		&certificatesv1.ClusterTrustBundle{ObjectMeta: clusterMeta("corp-roots", time.Hour)},
	}
}

func podCertificateRequestFixtures() []runtime.Object {
	spec := certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/signer", PodName: "web-0", ServiceAccountName: "web", NodeName: "node-1"}
	issued := spec
	issued.UnverifiedUserAnnotations = map[string]string{"example.com/b": "2", "example.com/a": "1"}
	return []runtime.Object{
		&certificatesv1.PodCertificateRequest{ObjectMeta: objMeta("req-pending", time.Minute), Spec: spec},
		&certificatesv1.PodCertificateRequest{ObjectMeta: objMeta("req-issued", time.Minute), Spec: issued,
			Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue}}}},
		&certificatesv1.PodCertificateRequest{ObjectMeta: objMeta("req-denied", time.Minute), Spec: spec,
			Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue}}}},
	}
}
