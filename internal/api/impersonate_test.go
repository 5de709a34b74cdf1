package api_test

import (
	"bytes"
	"context"
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
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/api"
	"minik/internal/pki"
	"minik/internal/server"
	"minik/internal/testserver"
)

// actingClient returns a clientset authenticating as requester (a client
// certificate) and impersonating as imp says.
func actingClient(t *testing.T, srv *testserver.Server, requester string, imp rest.ImpersonationConfig) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(actingConfig(t, srv, requester, imp))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func actingConfig(t *testing.T, srv *testserver.Server, requester string, imp rest.ImpersonationConfig) *rest.Config {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.SignClient(requester, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.CertData, cfg.KeyData = kp.CertPEM, kp.KeyPEM
	cfg.Impersonate = imp
	cfg.QPS = -1
	return cfg
}

// whoami asks the server who cs is.
func whoami(t *testing.T, cs kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.UserInfo
}

func TestImpersonation(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("carol-token,carol,carol-uid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testserver.StartWith(t, testserver.Options{TokenAuthFile: tokens})
	ctx := context.Background()
	admin := srv.Client(t)
	namespace(t, admin, "demo")
	if _, err := admin.CoreV1().ConfigMaps("demo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// alice may impersonate bob, the group devs, any uid and the extra
	// "scopes"; with edit in demo she may also impersonate its service
	// accounts (kube's edit role has that rule).
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "impersonator"},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"bob"}},
			{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"devs"}},
			{Verbs: []string{"impersonate"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"uids", "userextras/scopes"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-impersonator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonator"},
		Subjects:   []rbacv1.Subject{userSubject("alice")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, admin, "demo", "alice-edit", "edit", userSubject("alice"))
	bindClusterRole(t, admin, "demo", "bob-view", "view", userSubject("bob"))
	bindClusterRole(t, admin, "demo", "devs-edit", "edit", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "devs"})
	bindClusterRole(t, admin, "demo", "builder-view", "view", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "demo"})

	asBob := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "bob"})
	eventually(t, "alice reads config maps as bob", func() error {
		_, err := asBob.CoreV1().ConfigMaps("demo").Get(ctx, "app", metav1.GetOptions{})
		return err
	})

	t.Run("alice acting as bob is bob, in system:authenticated", func(t *testing.T) {
		u := whoami(t, asBob)
		if u.Username != "bob" || !slices.Equal(u.Groups, []string{"system:authenticated"}) || u.UID != "" || len(u.Extra) != 0 {
			t.Fatalf("user %+v", u)
		}
	})
	t.Run("alice acting as bob has bob's permissions, not hers", func(t *testing.T) {
		_, err := asBob.CoreV1().ConfigMaps("demo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bobs"}}, metav1.CreateOptions{})
		wantError(t, err, `configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "demo"`)
	})
	t.Run("alice may not impersonate mallory", func(t *testing.T) {
		_, err := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "mallory"}).CoreV1().ConfigMaps("demo").List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("err = %v", err)
		}
		wantError(t, err, `users "mallory" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`)
	})
	t.Run("a token user without the permission may not impersonate bob", func(t *testing.T) {
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.CertData, cfg.KeyData = nil, nil
		cfg.BearerToken = "carol-token"
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
		wantError(t, err, `users "bob" is forbidden: User "carol" cannot impersonate resource "users" in API group "" at the cluster scope`)
	})
	t.Run("alice acts as a service account of demo, with its groups", func(t *testing.T) {
		cs := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "system:serviceaccount:demo:builder"})
		u := whoami(t, cs)
		want := []string{"system:serviceaccounts", "system:serviceaccounts:demo", "system:authenticated"}
		if u.Username != "system:serviceaccount:demo:builder" || !slices.Equal(u.Groups, want) {
			t.Fatalf("user %+v", u)
		}
		if _, err := cs.CoreV1().ConfigMaps("demo").Get(ctx, "app", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		err := cs.CoreV1().ConfigMaps("demo").Delete(ctx, "app", metav1.DeleteOptions{})
		wantError(t, err, `configmaps "app" is forbidden: User "system:serviceaccount:demo:builder" cannot delete resource "configmaps" in API group "" in the namespace "demo"`)
	})
	t.Run("alice may not act as a service account of another namespace", func(t *testing.T) {
		cs := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "system:serviceaccount:default:builder"})
		_, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		wantError(t, err, `serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"`)
	})
	t.Run("alice acts as bob in devs, with devs' permissions", func(t *testing.T) {
		cs := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "bob", Groups: []string{"devs"}})
		if u := whoami(t, cs); u.Username != "bob" || !slices.Equal(u.Groups, []string{"devs", "system:authenticated"}) {
			t.Fatalf("user %+v", u)
		}
		if _, err := cs.CoreV1().ConfigMaps("demo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "devs"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("alice may not add bob to admins", func(t *testing.T) {
		cs := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "bob", Groups: []string{"devs", "admins"}})
		_, err := cs.CoreV1().ConfigMaps("demo").List(ctx, metav1.ListOptions{})
		wantError(t, err, `groups "admins" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope`)
	})
	t.Run("alice sets bob's uid and an extra", func(t *testing.T) {
		cs := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "bob", UID: "bob-1", Extra: map[string][]string{"scopes": {"view", "read"}}})
		u := whoami(t, cs)
		if u.Username != "bob" || u.UID != "bob-1" || !slices.Equal(u.Extra["scopes"], []string{"view", "read"}) || len(u.Extra) != 1 {
			t.Fatalf("user %+v", u)
		}
	})
	t.Run("alice may not set another extra", func(t *testing.T) {
		cs := actingClient(t, srv, "alice", rest.ImpersonationConfig{UserName: "bob", Extra: map[string][]string{"example.com/team": {"red"}}})
		_, err := cs.CoreV1().ConfigMaps("demo").List(ctx, metav1.ListOptions{})
		wantError(t, err, `userextras.authentication.k8s.io "red" is forbidden: User "alice" cannot impersonate resource "userextras/example.com/team" in API group "authentication.k8s.io" at the cluster scope`)
	})
	t.Run("a group without a user is a bad request", func(t *testing.T) {
		// client-go refuses to send this; a raw request does.
		cfg := actingConfig(t, srv, "alice", rest.ImpersonationConfig{})
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodGet, cfg.Host+"/api/v1/namespaces/demo/configmaps", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Add("Impersonate-Group", "devs")
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		want := `"message":"requested [{Group  devs    }] without impersonating a user","reason":"BadRequest","code":400`
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(want)) {
			t.Fatalf("%d %s\nwant %s", resp.StatusCode, body, want)
		}
	})
	t.Run("the audit event names the requester and the impersonated user", func(t *testing.T) {
		ev := findAudit(t, srv.DataDir, "alice's request as bob", func(ev *api.AuditEvent) bool {
			return ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username == "bob" && ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "configmaps"
		})
		if ev.User.Username != "alice" || !slices.Equal(ev.ImpersonatedUser.Groups, []string{"system:authenticated"}) || ev.ResponseStatus.Code != http.StatusForbidden {
			t.Fatalf("event user %+v impersonated %+v status %+v", ev.User, ev.ImpersonatedUser, ev.ResponseStatus)
		}
		if ev.Annotations[api.AuditDecisionAnnotation] != "forbid" {
			t.Fatalf("annotations %v", ev.Annotations)
		}
		denied := findAudit(t, srv.DataDir, "alice's refused impersonation of mallory", func(ev *api.AuditEvent) bool {
			return ev.User.Username == "alice" && ev.ResponseStatus != nil && strings.HasPrefix(ev.ResponseStatus.Message, `users "mallory" is forbidden`)
		})
		if denied.ImpersonatedUser != nil || denied.ResponseStatus.Code != http.StatusForbidden {
			t.Fatalf("event %+v", denied)
		}
	})
	t.Run("kubectl --as works", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("no kubectl in PATH")
		}
		data, err := server.UserKubeconfig(server.UserKubeconfigOptions{DataDir: srv.DataDir, User: "alice", TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		kc := filepath.Join(dir, "alice.kubeconfig")
		if err := os.WriteFile(kc, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// The discovery cache, filled by alice's own first request, lets
		// the refused "get" below reach the server with its request.
		cache := filepath.Join(dir, "cache")
		run := func(args ...string) (string, int) {
			cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kc, "--cache-dir", cache}, args...)...)
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
		if out, code := run("auth", "can-i", "create", "configmaps", "-n", "demo"); out != "yes" || code != 0 {
			t.Errorf("alice can-i create configmaps: %q (exit %d)", out, code)
		}
		if out, code := run("auth", "can-i", "create", "configmaps", "-n", "demo", "--as", "bob"); out != "no" || code != 1 {
			t.Errorf("bob can-i create configmaps: %q (exit %d)", out, code)
		}
		if out, code := run("auth", "can-i", "create", "configmaps", "-n", "demo", "--as", "bob", "--as-group", "devs"); out != "yes" || code != 0 {
			t.Errorf("bob in devs can-i create configmaps: %q (exit %d)", out, code)
		}
		if out, code := run("auth", "whoami", "--as", "system:serviceaccount:demo:builder", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"); code != 0 ||
			out != `system:serviceaccount:demo:builder ["system:serviceaccounts","system:serviceaccounts:demo","system:authenticated"]` {
			t.Errorf("whoami as builder: %q (exit %d)", out, code)
		}
		want := `Error from server (Forbidden): users "mallory" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`
		if out, code := run("get", "configmaps", "-n", "demo", "--as", "mallory"); out != want || code != 1 {
			t.Errorf("get as mallory: %q (exit %d)", out, code)
		}
	})
}
