package plugins_test

import (
	"context"
	"encoding/base64"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// sampleCA is a self-signed CA certificate, PEM.
const sampleCA = "-----BEGIN CERTIFICATE-----\nMIIBWDCB/6ADAgECAgEBMAoGCCqGSM49BAMCMBQxEjAQBgNVBAMTCXNhbXBsZS1j\nYTAeFw0yNjAxMDEwMDAwMDBaFw0zNjAxMDEwMDAwMDBaMBQxEjAQBgNVBAMTCXNh\nbXBsZS1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABDXdUViF55NXFHjUpthI\nOT9WdyGlxmVjbvfysk0TsP+WjcK3IXWTjSkSWI4EBSvQDQx7jgErkaJXncUTfd3u\nbMCjQjBAMA4GA1UdDwEB/wQEAwIChDAPBgNVHRMBAf8EBTADAQH/MB0GA1UdDgQW\nBBSzYds5DODOi3pv2h9UAxpcWS6G/zAKBggqhkjOPQQDAgNIADBFAiEA3ohEnURE\nE7/uCMzgke9xXtTcQIZtA1RC/92J6U4vpbwCIGgGmASGrEvOhUFxA1TEawVMC0ly\nVQ8fKKH0NuQhd2HK\n-----END CERTIFICATE-----\n"

// TestSignerVerbs: writing a ClusterTrustBundle of a signer needs
// "attest" on it, and a PodCertificateRequest's status "sign", by the
// signer's name or its domain's wildcard, with kube's messages.
func TestSignerVerbs(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)
	role := func(name string, rules ...rbacv1.PolicyRule) {
		t.Helper()
		if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) kubernetes.Interface {
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	write := rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"clustertrustbundles", "podcertificaterequests", "podcertificaterequests/status"}, Verbs: []string{"create", "get", "update"}}
	role("writer", write)
	role("attester", write, rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"example.com/*"}, Verbs: []string{"attest", "sign"}})
	for _, user := range []string{"writer", "attester"} {
		// The RBAC change reaches the authorizer's cache.
		ctrltest.Wait(t, user+"'s role", func() bool {
			r, err := as(user).AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "podcertificaterequests", Subresource: "status", Verb: "update", Namespace: "demo"},
			}}, metav1.CreateOptions{})
			return err == nil && r.Status.Allowed
		})
	}

	bundle := func(name string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/s", TrustBundle: sampleCA}}
	}
	t.Run("attest", func(t *testing.T) {
		_, err := as("writer").CertificatesV1().ClusterTrustBundles().Create(ctx, bundle("example.com:s:a"), metav1.CreateOptions{})
		want := `clustertrustbundles.certificates.k8s.io "example.com:s:a" is forbidden: user not permitted to attest for signerName "example.com/s"`
		if err == nil || err.Error() != want {
			t.Errorf("create without attest: %v; want %s", err, want)
		}
		if _, err := as("attester").CertificatesV1().ClusterTrustBundles().Create(ctx, bundle("example.com:s:b"), metav1.CreateOptions{}); err != nil {
			t.Errorf("create with attest on example.com/*: %v", err)
		}
		unlinked := bundle("roots")
		unlinked.Spec.SignerName = ""
		if _, err := as("writer").CertificatesV1().ClusterTrustBundles().Create(ctx, unlinked, metav1.CreateOptions{}); err != nil {
			t.Errorf("a bundle of no signer needs no attest: %v", err)
		}
	})

	t.Run("sign a pod certificate request", func(t *testing.T) {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		stub := decodeBase64(t, "MH8wMwIBADAAMCowBQYDK2VwAyEALCKnJb9ae23MBFjf1egVjJZvqxfx2KepydI7gv6LFyqgADAFBgMrZXADQQBuJFtVs0rYbGvb/qIcXpYeEPh0OqnW4++caaKuYFsyhzI9o5/XZKZwaHhjM4j3cMIU2tSzufiD9N+RJU3PDqEC")
		pcr, err := admin.CertificatesV1().PodCertificateRequests("demo").Create(ctx, &certificatesv1.PodCertificateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "req"},
			Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/s", PodName: "p", PodUID: "u1", ServiceAccountName: "default", ServiceAccountUID: "u2",
				NodeName: "n", NodeUID: "u3", MaxExpirationSeconds: new(int32(86400)), StubPKCS10Request: stub},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pcr.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue, Reason: "NotToday", Message: "no", LastTransitionTime: metav1.Now()}}
		_, err = as("writer").CertificatesV1().PodCertificateRequests("demo").UpdateStatus(ctx, pcr, metav1.UpdateOptions{})
		want := `PodCertificateRequest.certificates.k8s.io "req" is invalid: spec.signerName: Forbidden: User "writer" is not permitted to "sign" for signer "example.com/s"`
		if err == nil || err.Error() != want {
			t.Errorf("status by writer: %v; want %s", err, want)
		}
		if _, err := as("attester").CertificatesV1().PodCertificateRequests("demo").UpdateStatus(ctx, pcr, metav1.UpdateOptions{}); err != nil {
			t.Errorf("status with sign on example.com/*: %v", err)
		}
	})
}

func decodeBase64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
