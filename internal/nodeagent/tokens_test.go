package nodeagent_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/remotecommand"

	"minik/internal/testserver"
)

// TestProjectedTokensAreIssued: a pod's service account token (the
// kube-api-access volume) and a projected token with its own audience are
// real tokens the node requested bound to the pod: a TokenReview
// authenticates each as the pod's service account, with the pod's name,
// and only for its audience — what in-cluster clients and the
// conformance suite's "should mount an API token into pods" rely on.
func TestProjectedTokensAreIssued(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Nodes: 1, ServiceAccountAdmission: true})
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secs := int64(600)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName: "minik-node-1", ServiceAccountName: "reader",
			Containers: []corev1.Container{{
				Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "vault", MountPath: "/var/run/secrets/vault"}},
			}},
			Volumes: []corev1.Volume{{Name: "vault", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "vault", ExpirationSeconds: &secs, Path: "token"}}},
			}}}},
		},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := waitPod(t, cs, "default", "tokens", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	cat := func(path string) string {
		t.Helper()
		u := execURL(cs, "tokens", "app", []string{"cat", path}, false, false)
		ex, err := remotecommand.NewWebSocketExecutor(srv.RESTConfig, "GET", u.String())
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var out, errOut bytes.Buffer
		if err := ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}); err != nil {
			t.Fatalf("cat %s: %v: %s", path, err, errOut.String())
		}
		return out.String()
	}
	review := func(token string, audiences ...string) *authenticationv1.TokenReview {
		t.Helper()
		tr, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	check := func(what string, tr *authenticationv1.TokenReview) {
		t.Helper()
		u := tr.Status.User
		if !tr.Status.Authenticated || tr.Status.Error != "" || u.Username != "system:serviceaccount:default:reader" ||
			!slices.Contains(u.Groups, "system:serviceaccounts") || !slices.Contains(u.Groups, "system:authenticated") ||
			!slices.Equal(u.Extra["authentication.kubernetes.io/pod-name"], authenticationv1.ExtraValue{"tokens"}) ||
			!slices.Equal(u.Extra["authentication.kubernetes.io/pod-uid"], authenticationv1.ExtraValue{string(running.UID)}) {
			t.Errorf("%s: review %+v", what, tr.Status)
		}
	}

	apiToken := cat("/var/run/secrets/kubernetes.io/serviceaccount/token")
	check("the kube-api-access token", review(apiToken))
	if ns := cat("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); ns != "default" {
		t.Errorf("namespace file %q", ns)
	}

	vaultToken := cat("/var/run/secrets/vault/token")
	tr := review(vaultToken, "vault")
	check("the vault token", tr)
	if !slices.Equal(tr.Status.Audiences, []string{"vault"}) {
		t.Errorf("vault token audiences %v", tr.Status.Audiences)
	}
	if tr := review(vaultToken); tr.Status.Authenticated {
		t.Errorf("the vault token authenticates for the API server's audience: %+v", tr.Status)
	}
}
