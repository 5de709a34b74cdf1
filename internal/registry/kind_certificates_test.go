package registry

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/auth"
)

// Validation and strategies of the certificates.k8s.io kinds, with
// kube's messages.

// sampleCSRRequest is the sample CSR's spec.request (ECDSA P-256,
// CN=sample-user), base64 as in a manifest; sampleCACert a self-signed
// CA certificate, likewise.
const (
	sampleCSRRequest = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIb01JR1BBZ0VBTUMweEZUQVRCZ05WQkFvVERITmhiWEJzWlMxbmNtOTFjREVVTUJJR0ExVUVBeE1MYzJGdApjR3hsTFhWelpYSXdXVEFUQmdjcWhrak9QUUlCQmdncWhrak9QUU1CQndOQ0FBUTEzVkZZaGVlVFZ4UjQxS2JZClNEay9WbmNocGNabFkyNzM4ckpORTdEL2xvM0N0eUYxazQwcEVsaU9CQVVyMEEwTWU0NEJLNUdpVjUzRkUzM2QKN216QW9BQXdDZ1lJS29aSXpqMEVBd0lEU0FBd1JRSWdORnByOE1lLzVJRVFCdjhQQ3VhQlVnWFFJUngwVXFDaAorOWZ5dmJ2WTFMSUNJUURqVm9SdzY1STc2eElOdXZTTFhTREpqSkFtWnh5cXc3WGpTVVNGWWVxRWlnPT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg=="
	sampleCACert     = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJXRENCLzZBREFnRUNBZ0VCTUFvR0NDcUdTTTQ5QkFNQ01CUXhFakFRQmdOVkJBTVRDWE5oYlhCc1pTMWoKWVRBZUZ3MHlOakF4TURFd01EQXdNREJhRncwek5qQXhNREV3TURBd01EQmFNQlF4RWpBUUJnTlZCQU1UQ1hOaApiWEJzWlMxallUQlpNQk1HQnlxR1NNNDlBZ0VHQ0NxR1NNNDlBd0VIQTBJQUJEWGRVVmlGNTVOWEZIalVwdGhJCk9UOVdkeUdseG1WamJ2ZnlzazBUc1ArV2pjSzNJWFdUalNrU1dJNEVCU3ZRRFF4N2pnRXJrYUpYbmNVVGZkM3UKYk1DalFqQkFNQTRHQTFVZER3RUIvd1FFQXdJQ2hEQVBCZ05WSFJNQkFmOEVCVEFEQVFIL01CMEdBMVVkRGdRVwpCQlN6WWRzNURPRE9pM3B2Mmg5VUF4cGNXUzZHL3pBS0JnZ3Foa2pPUFFRREFnTklBREJGQWlFQTNvaEVuVVJFCkU3L3VDTXpna2U5eFh0VGNRSVp0QTFSQy85Mko2VTR2cGJ3Q0lHZ0dtQVNHckV2T2hVRnhBMVRFYXdWTUMwbHkKVlE4ZktLSDBOdVFoZDJISwotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="
)

const csrHead = `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: c}
`

func TestCertificateSigningRequestValidation(t *testing.T) {
	spec := func(s string) string { return csrHead + "spec: {request: " + sampleCSRRequest + ", " + s + "}" }
	runCreateCases(t, []createCase{
		{"a client CSR is valid", spec("signerName: kubernetes.io/kube-apiserver-client, usages: [client auth]"), ""},
		{"the request must be a PEM CERTIFICATE REQUEST", csrHead + "spec: {request: " + sampleCACert + ", signerName: example.com/s, usages: [client auth]}",
			`spec.request: Invalid value: "` + sampleCACert + `": PEM block type must be CERTIFICATE REQUEST`},
		{"signerName and usages are required", csrHead + "spec: {request: " + sampleCSRRequest + "}",
			"spec.usages: Required value\nspec.signerName: Required value"},
		{"a signer is domain/path", spec("signerName: example, usages: [client auth]"),
			`spec.signerName: Invalid value: "example": must be a fully qualified domain and path of the form 'example.com/signer-name'`},
		{"a signer's domain has two labels", spec("signerName: example/s, usages: [client auth]"),
			`spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots`},
		{"the legacy signer is refused", spec("signerName: kubernetes.io/legacy-unknown, usages: [client auth]"),
			`spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version`},
		{"expirationSeconds is at least 600", spec("signerName: example.com/s, usages: [client auth], expirationSeconds: 599"),
			"spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"},
		{"usages are known and distinct", spec("signerName: example.com/s, usages: [client auth, flying, client auth]"),
			`spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"` +
				"\n" + `spec.usages[2]: Duplicate value: "client auth"`},
	})
}

func TestCertificateSigningRequestStrategy(t *testing.T) {
	s := strategyOf(decode(t, csrHead))
	newCSR := func() *certificatesv1.CertificateSigningRequest {
		return decode(t, "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: c, resourceVersion: '1'}\nspec: {request: "+sampleCSRRequest+", signerName: example.com/s, usages: [client auth], username: mallory, groups: [system:masters]}").(*certificatesv1.CertificateSigningRequest)
	}
	t.Run("the requestor is who creates it", func(t *testing.T) {
		csr := newCSR()
		ctx := auth.WithUser(context.Background(), &auth.User{Name: "alice", UID: "u-1", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}})
		s.PrepareForCreate(ctx, csr)
		if csr.Spec.Username != "alice" || csr.Spec.UID != "u-1" || strings.Join(csr.Spec.Groups, ",") != "dev" || csr.Spec.Extra["k"][0] != "v" {
			t.Errorf("spec after create = %+v; want alice's identity", csr.Spec)
		}
	})
	t.Run("approval changes only the approval conditions", func(t *testing.T) {
		old := newCSR()
		s.PrepareForCreate(context.Background(), old)
		sent := old.DeepCopy()
		sent.Spec.SignerName = "example.com/other"
		sent.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
		approval := certificateSigningRequests.Subresource("approval").Update
		merged := approval.Merge(old.DeepCopy(), sent).(*certificatesv1.CertificateSigningRequest)
		if merged.Spec.SignerName != "example.com/s" || len(merged.Status.Conditions) != 1 || merged.Status.Conditions[0].LastUpdateTime.IsZero() {
			t.Fatalf("merged = %+v", merged)
		}
		if errs := approval.ValidateUpdate(context.Background(), merged, old); len(errs) > 0 {
			t.Errorf("approval refused: %v", errs)
		}
		if got := messages(s.Status.ValidateUpdate(context.Background(), merged, old)); got != `status.conditions: Forbidden: updates may not add a condition of type "Approved"` {
			t.Errorf("status write adding Approved: %s", got)
		}
		both := merged.DeepCopy()
		both.Status.Conditions = append(both.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
		if got := messages(approval.ValidateUpdate(context.Background(), both, old)); got != `status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive` {
			t.Errorf("approving and denying: %s", got)
		}
	})
	t.Run("status keeps approvals and sets the certificate once", func(t *testing.T) {
		old := newCSR()
		old.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Kept", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		sent := old.DeepCopy()
		sent.Status.Conditions[0].Reason = "Changed"
		sent.Status.Certificate = decode(t, "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: c}\nstatus: {certificate: "+sampleCACert+"}").(*certificatesv1.CertificateSigningRequest).Status.Certificate
		merged := s.Status.Merge(old.DeepCopy(), sent).(*certificatesv1.CertificateSigningRequest)
		if merged.Status.Conditions[0].Reason != "Kept" {
			t.Errorf("status write changed the approval: %+v", merged.Status.Conditions[0])
		}
		if errs := s.Status.ValidateUpdate(context.Background(), merged, old); len(errs) > 0 {
			t.Errorf("issuing refused: %v", errs)
		}
		if got := messages(update(merged.DeepCopy(), old)); got != "" {
			t.Errorf("a main update (which keeps spec and status): %s", got)
		}
		again := merged.DeepCopy()
		again.Status.Certificate = append([]byte(nil), again.Status.Certificate...)
		again.Status.Certificate[len(again.Status.Certificate)-2] = '\n'
		again.Status.Certificate = append(again.Status.Certificate, merged.Status.Certificate...)
		if got := messages(s.Status.ValidateUpdate(context.Background(), again, merged)); !strings.Contains(got, "status.certificate: Forbidden: updates may not modify existing certificate content") {
			t.Errorf("replacing the certificate: %s", got)
		}
	})
}

const ctbHead = `apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
`

func TestClusterTrustBundleValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a signer's bundle is valid", ctbHead + "metadata: {name: 'example.com:s:roots'}\nspec: {signerName: example.com/s, trustBundle: \"" + pemOf(t, sampleCACert) + "\"}", ""},
		{"a signer's bundle is named after it", ctbHead + "metadata: {name: roots}\nspec: {signerName: example.com/s, trustBundle: \"" + pemOf(t, sampleCACert) + "\"}",
			`metadata.name: Invalid value: "roots": ClusterTrustBundle for signerName example.com/s must be named with prefix example.com:s:`},
		{"a bundle of no signer has no colon", ctbHead + "metadata: {name: 'a:b'}\nspec: {trustBundle: \"" + pemOf(t, sampleCACert) + "\"}",
			`metadata.name: Invalid value: "a:b": ClusterTrustBundle without signer name must not have ":" in its name`},
		{"a bundle holds certificates", ctbHead + "metadata: {name: roots}\nspec: {trustBundle: \"\"}",
			`spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided`},
		{"no anchor twice", ctbHead + "metadata: {name: roots}\nspec: {trustBundle: \"" + pemOf(t, sampleCACert) + pemOf(t, sampleCACert) + "\"}",
			`spec.trustBundle: Invalid value: "<value omitted>": duplicate trust anchor (indices [0 1])`},
	})
}

// pemOf returns the PEM of a base64 constant, escaped for a YAML
// double-quoted string.
func pemOf(t *testing.T, b64 string) string {
	t.Helper()
	csr := decode(t, "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: c}\nstatus: {certificate: "+b64+"}").(*certificatesv1.CertificateSigningRequest)
	return strings.ReplaceAll(string(csr.Status.Certificate), "\n", "\\n")
}
