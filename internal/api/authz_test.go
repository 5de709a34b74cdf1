package api_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"minik/internal/pki"
	"minik/internal/server"
	"minik/internal/testserver"
)

// userClient returns a clientset authenticating with a client certificate
// for user and groups, signed by the server's CA.
func userClient(t testing.TB, srv *testserver.Server, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.SignClient(user, groups, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.CertData, cfg.KeyData = kp.CertPEM, kp.KeyPEM
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// tokenClient returns a clientset authenticating with a bearer token only.
func tokenClient(t *testing.T, srv *testserver.Server, token string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.CertData, cfg.KeyData = nil, nil
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// eventually retries f until it returns nil: RBAC and token checks read
// informer caches, a few milliseconds behind the writes.
func eventually(t testing.TB, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func bindClusterRole(t testing.TB, cs kubernetes.Interface, ns, name, role string, subject rbacv1.Subject) {
	t.Helper()
	_, err := cs.RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}
}

func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
}

func TestRBACEndToEnd(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)
	namespace(t, admin, "demo")
	if _, err := admin.CoreV1().ConfigMaps("demo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, admin, "demo", "viewer-view", "view", userSubject("viewer"))
	bindClusterRole(t, admin, "demo", "nsadmin-admin", "admin", userSubject("nsadmin"))
	viewer := userClient(t, srv, "viewer", "viewers")
	nsadmin := userClient(t, srv, "nsadmin")
	eventually(t, "the viewer reads a config map", func() error {
		_, err := viewer.CoreV1().ConfigMaps("demo").Get(ctx, "app", metav1.GetOptions{})
		return err
	})
	eventually(t, "the namespace admin lists roles", func() error {
		_, err := nsadmin.RbacV1().Roles("demo").List(ctx, metav1.ListOptions{})
		return err
	})

	t.Run("the viewer lists pods in demo", func(t *testing.T) {
		if _, err := viewer.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the viewer cannot create a pod, in kube's words", func(t *testing.T) {
		_, err := viewer.CoreV1().Pods("demo").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("err = %v", err)
		}
		wantError(t, err, `pods is forbidden: User "viewer" cannot create resource "pods" in API group "" in the namespace "demo"`)
	})
	t.Run("the viewer cannot read a secret", func(t *testing.T) {
		_, err := viewer.CoreV1().Secrets("demo").Get(ctx, "token", metav1.GetOptions{})
		wantError(t, err, `secrets "token" is forbidden: User "viewer" cannot get resource "secrets" in API group "" in the namespace "demo"`)
	})
	t.Run("the viewer cannot read another namespace", func(t *testing.T) {
		_, err := viewer.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		wantError(t, err, `configmaps is forbidden: User "viewer" cannot list resource "configmaps" in API group "" in the namespace "default"`)
	})
	t.Run("auth can-i asks with a SelfSubjectAccessReview", func(t *testing.T) {
		ask := func(verb, resource string) *authorizationv1.SelfSubjectAccessReview {
			t.Helper()
			r, err := viewer.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "demo", Verb: verb, Resource: resource}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if r := ask("get", "pods"); !r.Status.Allowed || r.Status.Reason != `RBAC: allowed by RoleBinding "viewer-view/demo" of ClusterRole "view" to User "viewer"` {
			t.Fatalf("get pods: %+v", r.Status)
		}
		if r := ask("create", "pods"); r.Status.Allowed || r.Status.Denied {
			t.Fatalf("create pods: %+v", r.Status)
		}
	})
	t.Run("an access review with neither attribute is invalid", func(t *testing.T) {
		_, err := viewer.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
		wantError(t, err, `SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`)
	})
	t.Run("auth can-i --list asks with a SelfSubjectRulesReview", func(t *testing.T) {
		r, err := viewer.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
			Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "demo"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, rule := range r.Status.ResourceRules {
			if slices.Contains(rule.Resources, "pods") && slices.Contains(rule.Verbs, "get") {
				found = true
			}
		}
		if !found || len(r.Status.NonResourceRules) == 0 {
			t.Fatalf("rules %+v", r.Status)
		}
	})
	t.Run("auth whoami asks with a SelfSubjectReview", func(t *testing.T) {
		r, err := viewer.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if u := r.Status.UserInfo; u.Username != "viewer" || !slices.Equal(u.Groups, []string{"viewers", "system:authenticated"}) {
			t.Fatalf("user %+v", u)
		}
	})
	t.Run("an admin asks about the viewer with a SubjectAccessReview", func(t *testing.T) {
		r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "viewer", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "demo", Verb: "watch", Resource: "pods"}},
		}, metav1.CreateOptions{})
		if err != nil || !r.Status.Allowed {
			t.Fatalf("%+v %v", r, err)
		}
	})
	t.Run("the viewer may not ask about others", func(t *testing.T) {
		_, err := viewer.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "nsadmin", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}},
		}, metav1.CreateOptions{})
		wantError(t, err, `subjectaccessreviews.authorization.k8s.io is forbidden: User "viewer" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`)
	})
	t.Run("a namespace admin asks about a user in its namespace with a LocalSubjectAccessReview", func(t *testing.T) {
		r, err := nsadmin.AuthorizationV1().LocalSubjectAccessReviews("demo").Create(ctx, &authorizationv1.LocalSubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "viewer", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "demo", Verb: "delete", Resource: "pods"}},
		}, metav1.CreateOptions{})
		if err != nil || r.Status.Allowed {
			t.Fatalf("%+v %v", r, err)
		}
	})
	t.Run("a namespace admin shares view", func(t *testing.T) {
		// The aggregated roles converge in the background (the
		// clusterrole-aggregation controller): admin holds all of view
		// once it has seen every role aggregated into both. Until then
		// the escalation check refuses the grant, as kube's would.
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := nsadmin.RbacV1().RoleBindings("demo").Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "alice-view"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects:   []rbacv1.Subject{userSubject("alice")},
			}, metav1.CreateOptions{})
			if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "attempting to grant RBAC permissions not currently held") {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a namespace admin cannot grant cluster-admin", func(t *testing.T) {
		_, err := nsadmin.RbacV1().RoleBindings("demo").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "root"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{userSubject("nsadmin")},
		}, metav1.CreateOptions{})
		wantError(t, err, `rolebindings.rbac.authorization.k8s.io "root" is forbidden: user "nsadmin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`+"\n"+`{NonResourceURLs:["*"], Verbs:["*"]}`)
	})
	t.Run("a namespace admin cannot write a role reading nodes", func(t *testing.T) {
		_, err := nsadmin.RbacV1().Roles("demo").Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "nodes"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"nodes"}}},
		}, metav1.CreateOptions{})
		wantError(t, err, `roles.rbac.authorization.k8s.io "nodes" is forbidden: user "nsadmin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}`)
	})
	t.Run("discovery lists the reviews as create-only", func(t *testing.T) {
		want := map[string]bool{"selfsubjectaccessreviews": false, "selfsubjectrulesreviews": false, "subjectaccessreviews": false, "localsubjectaccessreviews": true}
		list, err := viewer.Discovery().ServerResourcesForGroupVersion("authorization.k8s.io/v1")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			namespaced, ok := want[r.Name]
			if !ok || r.Namespaced != namespaced || !slices.Equal(r.Verbs, []string{"create"}) {
				t.Fatalf("%+v", r)
			}
			delete(want, r.Name)
		}
		if len(want) > 0 {
			t.Fatalf("missing %v", want)
		}
		_, err = admin.AuthorizationV1().RESTClient().Get().AbsPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").DoRaw(ctx)
		if !apierrors.IsMethodNotSupported(err) {
			t.Fatalf("GET: %v", err)
		}
	})
	t.Run("kubectl auth can-i and whoami work", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("no kubectl in PATH")
		}
		data, err := server.UserKubeconfig(server.UserKubeconfigOptions{DataDir: srv.DataDir, User: "viewer", Groups: []string{"viewers"}, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		kc := filepath.Join(t.TempDir(), "viewer.kubeconfig")
		if err := os.WriteFile(kc, data, 0o600); err != nil {
			t.Fatal(err)
		}
		run := func(args ...string) (string, int) {
			cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kc}, args...)...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(out.String()), code
		}
		if out, code := run("auth", "can-i", "get", "pods", "-n", "demo"); out != "yes" || code != 0 {
			t.Errorf("can-i get pods: %q (exit %d)", out, code)
		}
		if out, code := run("auth", "can-i", "create", "deployments.apps", "-n", "demo"); out != "no" || code != 1 {
			t.Errorf("can-i create deployments: %q (exit %d)", out, code)
		}
		if out, _ := run("auth", "whoami"); !strings.Contains(out, "viewer") || !strings.Contains(out, "[viewers system:authenticated]") {
			t.Errorf("whoami: %q", out)
		}
		if out, code := run("get", "configmaps", "-n", "demo", "-o", "name"); out != "configmap/app" || code != 0 {
			t.Errorf("get configmaps: %q (exit %d)", out, code)
		}
		if out, code := run("create", "configmap", "x", "-n", "demo"); code != 1 || !strings.Contains(out, `User "viewer" cannot create resource "configmaps" in API group "" in the namespace "demo"`) {
			t.Errorf("create configmap: %q (exit %d)", out, code)
		}
	})
}

func TestServiceAccountTokensEndToEnd(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"serviceaccount"}})
	ctx := context.Background()
	admin := srv.Client(t)
	namespace(t, admin, "demo")
	eventually(t, "the default service account of demo", func() error {
		_, err := admin.CoreV1().ServiceAccounts("demo").Get(ctx, "default", metav1.GetOptions{})
		return err
	})

	tr, err := admin.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a token request gets a token and its expiry", func(t *testing.T) {
		left := time.Until(tr.Status.ExpirationTimestamp.Time)
		if tr.Status.Token == "" || left < 59*time.Minute || left > time.Hour+time.Second || *tr.Spec.ExpirationSeconds != 3600 {
			t.Fatalf("status %+v (expires in %v)", tr.Status, left)
		}
	})
	sa := tokenClient(t, srv, tr.Status.Token)
	t.Run("the token authenticates as the service account", func(t *testing.T) {
		r, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u := r.Status.UserInfo
		want := []string{"system:serviceaccounts", "system:serviceaccounts:demo", "system:authenticated"}
		if u.Username != "system:serviceaccount:demo:default" || !slices.Equal(u.Groups, want) || u.UID == "" {
			t.Fatalf("user %+v", u)
		}
	})
	t.Run("the service account is authorized by RBAC like anyone", func(t *testing.T) {
		_, err := sa.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
		wantError(t, err, `pods is forbidden: User "system:serviceaccount:demo:default" cannot list resource "pods" in API group "" in the namespace "demo"`)
		bindClusterRole(t, admin, "demo", "default-view", "view", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "demo"})
		eventually(t, "the service account lists pods", func() error {
			_, err := sa.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
			return err
		})
	})
	t.Run("kubectl create token gets a token through the subresource", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("no kubectl in PATH")
		}
		out, err := exec.Command(kubectl, "--kubeconfig", srv.KubeconfigPath, "create", "token", "default", "-n", "demo", "--duration", "15m").CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		r, err := tokenClient(t, srv, strings.TrimSpace(string(out))).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil || r.Status.UserInfo.Username != "system:serviceaccount:demo:default" {
			t.Fatalf("%+v %v", r, err)
		}
	})
	t.Run("a token review tells who the token is", func(t *testing.T) {
		r, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
		if err != nil || !r.Status.Authenticated || r.Status.User.Username != "system:serviceaccount:demo:default" {
			t.Fatalf("%+v %v", r, err)
		}
		r, err = admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token, Audiences: []string{"vault"}}}, metav1.CreateOptions{})
		if err != nil || r.Status.Authenticated || r.Status.Error == "" {
			t.Fatalf("for another audience: %+v %v", r.Status, err)
		}
	})
	t.Run("a token bound to a secret is refused with a wrong UID", func(t *testing.T) {
		if _, err := admin.CoreV1().Secrets("demo").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "anchor"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := admin.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "anchor", UID: "not-its-uid"},
		}}, metav1.CreateOptions{})
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "the UID in the bound object reference (not-its-uid) does not match the UID in record") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a token request for less than ten minutes is invalid", func(t *testing.T) {
		_, err := admin.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)}}, metav1.CreateOptions{})
		wantError(t, err, `TokenRequest.authentication.k8s.io "default" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes`)
	})
	t.Run("a token request for a missing account is not found", func(t *testing.T) {
		_, err := admin.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "ghost", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		wantError(t, err, `serviceaccounts "ghost" not found`)
	})
	t.Run("a forged token is unauthorized", func(t *testing.T) {
		parts := strings.Split(tr.Status.Token, ".")
		forged := tokenClient(t, srv, parts[0]+"."+parts[1]+".AAAA")
		_, err := forged.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a deleted default service account comes back", func(t *testing.T) {
		old, err := admin.CoreV1().ServiceAccounts("demo").Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.CoreV1().ServiceAccounts("demo").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a new default service account", func() error {
			sa, err := admin.CoreV1().ServiceAccounts("demo").Get(ctx, "default", metav1.GetOptions{})
			if err == nil && sa.UID == old.UID {
				return io.EOF
			}
			return err
		})
	})
	t.Run("discovery lists serviceaccounts/token", func(t *testing.T) {
		list, err := admin.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if r.Name == "serviceaccounts/token" {
				if r.Group != "authentication.k8s.io" || r.Kind != "TokenRequest" || !slices.Equal(r.Verbs, []string{"create"}) {
					t.Fatalf("%+v", r)
				}
				return
			}
		}
		t.Fatal("no serviceaccounts/token")
	})
}

func TestStaticTokensAndAnonymous(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(file, []byte("s3cret,alice,u-1,\"devs,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testserver.StartWith(t, testserver.Options{TokenAuthFile: file})
	ctx := context.Background()
	t.Run("a static token authenticates its user", func(t *testing.T) {
		r, err := tokenClient(t, srv, "s3cret").AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if u := r.Status.UserInfo; u.Username != "alice" || u.UID != "u-1" || !slices.Equal(u.Groups, []string{"devs", "ops", "system:authenticated"}) {
			t.Fatalf("user %+v", u)
		}
	})
	t.Run("an unknown token is unauthorized", func(t *testing.T) {
		_, err := tokenClient(t, srv, "wrong").CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) || err.Error() != "Unauthorized" {
			t.Fatalf("err = %v", err)
		}
	})
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(t *testing.T, addr, path string) (int, string) {
		t.Helper()
		resp, err := insecure.Get("https://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	t.Run("an anonymous request is unauthorized except on the health paths", func(t *testing.T) {
		if code, _ := get(t, srv.Addr, "/readyz"); code != http.StatusOK {
			t.Fatalf("/readyz: %d", code)
		}
		code, body := get(t, srv.Addr, "/api")
		if code != http.StatusUnauthorized || !strings.Contains(body, `"reason":"Unauthorized"`) {
			t.Fatalf("/api: %d %s", code, body)
		}
	})
	t.Run("with --anonymous-auth an anonymous request is system:anonymous", func(t *testing.T) {
		anon := testserver.StartWith(t, testserver.Options{AnonymousAuth: true})
		code, body := get(t, anon.Addr, "/api")
		if code != http.StatusForbidden || !strings.Contains(body, `forbidden: User \"system:anonymous\" cannot get path \"/api\"`) {
			t.Fatalf("/api: %d %s", code, body)
		}
		if code, _ := get(t, anon.Addr, "/version"); code != http.StatusOK {
			t.Fatalf("/version: %d", code)
		}
	})
}

func TestNodeRestrictionEndToEnd(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)
	n1 := userClient(t, srv, "system:node:n1", "system:nodes")
	node := func(name string) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	if _, err := n1.CoreV1().Nodes().Create(ctx, node("n1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Nodes().Create(ctx, node("n2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("a node may not register another", func(t *testing.T) {
		_, err := n1.CoreV1().Nodes().Create(ctx, node("n3"), metav1.CreateOptions{})
		wantError(t, err, `nodes "n3" is forbidden: node "n1" is not allowed to modify node "n3"`)
	})
	t.Run("a node may not update another's status", func(t *testing.T) {
		n2, err := n1.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n2.Status.Phase = corev1.NodeRunning
		_, err = n1.CoreV1().Nodes().UpdateStatus(ctx, n2, metav1.UpdateOptions{})
		wantError(t, err, `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`)
	})
	t.Run("a node keeps its own lease and no other", func(t *testing.T) {
		lease := func(name string) *coordinationv1.Lease {
			return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name)}}
		}
		if _, err := n1.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease("n1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := n1.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease("n2"), metav1.CreateOptions{})
		wantError(t, err, `leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node`)
		_, err = n1.CoordinationV1().Leases("kube-node-lease").Get(ctx, "n2", metav1.GetOptions{})
		wantError(t, err, `leases.coordination.k8s.io "n2" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease with the same name as the requesting node`)
	})
	t.Run("a node reports the status of its own pods only", func(t *testing.T) {
		namespace(t, admin, "demo")
		for _, p := range []struct{ name, node string }{{"mine", "n1"}, {"theirs", "n2"}} {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name}, Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			if _, err := admin.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"mine", "theirs"} {
			pod, err := n1.CoreV1().Pods("demo").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pod.Status.Phase = corev1.PodRunning
			_, err = n1.CoreV1().Pods("demo").UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			if name == "mine" && err != nil {
				t.Fatal(err)
			}
			if name == "theirs" {
				wantError(t, err, `pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`)
			}
		}
	})
}
