package certificates

import (
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCleanerDeadlinesAreKubes(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) metav1.Time { return metav1.NewTime(now.Add(-ago)) }
	cond := func(typ certificatesv1.RequestConditionType, ago time.Duration) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: corev1.ConditionTrue, LastUpdateTime: at(ago)}
	}
	csr := func(created time.Duration, cert bool, conds ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: at(created)}}
		c.Status.Conditions = conds
		if cert {
			c.Status.Certificate = []byte("not parsed")
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		csr   *certificatesv1.CertificateSigningRequest
		stays bool
	}{
		{"pending for a day", csr(25*time.Hour, false), false},
		{"pending for a while", csr(23*time.Hour, false), true},
		{"issued an hour after approval", csr(2*time.Hour, true, cond(certificatesv1.CertificateApproved, 61*time.Minute)), false},
		{"issued just now", csr(2*time.Hour, true, cond(certificatesv1.CertificateApproved, time.Minute)), true},
		{"denied an hour ago", csr(2*time.Hour, false, cond(certificatesv1.CertificateDenied, 61*time.Minute)), false},
		{"failed an hour ago", csr(2*time.Hour, false, cond(certificatesv1.CertificateApproved, time.Minute), cond(certificatesv1.CertificateFailed, 61*time.Minute)), false},
		{"approved, unissued for a day", csr(48*time.Hour, false, cond(certificatesv1.CertificateApproved, 25*time.Hour)), false},
		{"approved, unissued for hours", csr(48*time.Hour, false, cond(certificatesv1.CertificateApproved, 5*time.Hour)), true},
	} {
		if got := expiredReason(tc.csr, now) == ""; got != tc.stays {
			t.Errorf("%s: stays = %v; want %v (%q)", tc.name, got, tc.stays, expiredReason(tc.csr, now))
		}
	}
}
