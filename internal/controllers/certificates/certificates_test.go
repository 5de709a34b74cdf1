package certificates_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/controllers/certificates"
	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// newRequest returns a PEM CSR for subject and its key, PEM-encoded.
func newRequest(t *testing.T, cn string, orgs ...string) (csrPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// as returns a client impersonating user in groups.
func as(t *testing.T, srv *testserver.Server, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// grant gives user a ClusterRole of rules, bound cluster-wide.
func grant(ctx context.Context, t *testing.T, cs kubernetes.Interface, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	name := "test:" + user
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var csrRule = rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests", "certificatesigningrequests/approval"}, Verbs: []string{"create", "get", "update"}}

func clientCSR(name string, req []byte) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: req, SignerName: certificatesv1.KubeAPIServerClientSignerName, ExpirationSeconds: new(int32(3600)),
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
}

func approve(csr *certificatesv1.CertificateSigningRequest) {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "TestApproved", Message: "approved by the test",
	})
}

// TestClientCertificateFromACSRAuthenticates: a user asks for a client
// certificate, the admin approves it, csrsigning issues it, and minikd
// takes a client presenting it for the CSR's subject.
func TestClientCertificateFromACSRAuthenticates(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{certificates.SigningName, certificates.ApprovingName}})
	ctx := context.Background()
	admin := srv.Client(t)
	grant(ctx, t, admin, "alice", csrRule)
	alice := as(t, srv, "alice")
	// The RBAC change reaches the authorizer's cache.
	ctrltest.Wait(t, "alice's role", func() bool {
		r, err := alice.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "approval", Verb: "update"},
		}}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed
	})

	req, key := newRequest(t, "carol", "qa", "dev")
	created, err := alice.CertificatesV1().CertificateSigningRequests().Create(ctx, clientCSR("carol", req), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Username != "alice" || !contains(created.Spec.Groups, "system:authenticated") {
		t.Errorf("requestor = %q %v; want alice, authenticated", created.Spec.Username, created.Spec.Groups)
	}

	t.Run("a user without approve on the signer is refused", func(t *testing.T) {
		csr := created.DeepCopy()
		approve(csr)
		_, err := alice.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
		want := `certificatesigningrequests.certificates.k8s.io "carol" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("approval by alice: %v; want %s", err, want)
		}
	})

	csr := created.DeepCopy()
	approve(csr)
	if _, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var issued *certificatesv1.CertificateSigningRequest
	ctrltest.Wait(t, "the certificate issued", func() bool {
		issued, err = admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "carol", metav1.GetOptions{})
		return err == nil && len(issued.Status.Certificate) > 0
	})
	block, _ := pem.Decode(issued.Status.Certificate)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if life := cert.NotAfter.Sub(cert.NotBefore); life != time.Hour+5*time.Minute {
		t.Errorf("certificate lifetime %v; want the hour asked for, backdated 5m", life)
	}
	if len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth || cert.KeyUsage != x509.KeyUsageDigitalSignature {
		t.Errorf("usages %v %v; want digital signature, client auth", cert.KeyUsage, cert.ExtKeyUsage)
	}

	cfg := &rest.Config{Host: srv.RESTConfig.Host, TLSClientConfig: rest.TLSClientConfig{CAData: srv.RESTConfig.CAData, CertData: issued.Status.Certificate, KeyData: key}}
	carol, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ssr, err := carol.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := ssr.Status.UserInfo; u.Username != "carol" || strings.Join(u.Groups, ",") != "qa,dev,system:authenticated" {
		t.Errorf("the certificate authenticates as %q %v; want carol in qa, dev", u.Username, u.Groups)
	}
}

// TestSubjectRestrictionAndSignerChecks: no system:masters client
// certificates; a kubelet client CSR of a node is approved and issued,
// one with wrong usages fails.
func TestSubjectRestrictionAndSignerChecks(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{certificates.SigningName, certificates.ApprovingName}})
	ctx := context.Background()
	admin := srv.Client(t)

	t.Run("system:masters is refused", func(t *testing.T) {
		req, _ := newRequest(t, "root", "system:masters")
		_, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx, clientCSR("root", req), metav1.CreateOptions{})
		want := `certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`
		if err == nil || err.Error() != want {
			t.Fatalf("create: %v; want %s", err, want)
		}
	})

	t.Run("a node's own client CSR is approved and issued", func(t *testing.T) {
		// kube's bootstrap role, bound as kubeadm binds it.
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "test:selfnodeclient"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:nodes"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		node := as(t, srv, "system:node:n1", "system:nodes")
		ctrltest.Wait(t, "the node's role", func() bool {
			r, err := node.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "selfnodeclient", Verb: "create"},
			}}, metav1.CreateOptions{})
			return err == nil && r.Status.Allowed
		})
		req, _ := newRequest(t, "system:node:n1", "system:nodes")
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "node-n1"},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
		}
		if _, err := node.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the node's certificate", func() bool {
			got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "node-n1", metav1.GetOptions{})
			return err == nil && len(got.Status.Certificate) > 0 && len(got.Status.Conditions) == 1 &&
				got.Status.Conditions[0].Reason == "AutoApproved" &&
				got.Status.Conditions[0].Message == "Auto approving self kubelet client certificate after SubjectAccessReview."
		})
	})

	t.Run("a kubelet serving CSR without names fails", func(t *testing.T) {
		req, _ := newRequest(t, "system:node:n1", "system:nodes")
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "serving-n1"},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: certificatesv1.KubeletServingSignerName,
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}},
		}
		created, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		approve(created)
		if _, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, created.Name, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the Failed condition", func() bool {
			got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "serving-n1", metav1.GetOptions{})
			if err != nil || len(got.Status.Conditions) != 2 {
				return false
			}
			c := got.Status.Conditions[1]
			return c.Type == certificatesv1.CertificateFailed && c.Reason == "SignerValidationFailure" && c.Message == "DNS or IP subjectAltName is required" && len(got.Status.Certificate) == 0
		})
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
