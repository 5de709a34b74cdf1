package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"minik/internal/server"
	"minik/internal/testserver"
)

// TestImpersonationFlags checks that --as, --as-group (repeated) and
// --as-uid reach the client configuration, as kubectl's do.
func TestImpersonationFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want rest.ImpersonationConfig
	}{
		{"no flag impersonates no one", nil, rest.ImpersonationConfig{}},
		{"--as names the user", []string{"--as", "bob"}, rest.ImpersonationConfig{UserName: "bob"}},
		{
			"--as-group repeats and --as-uid sets the uid",
			[]string{"--as=system:serviceaccount:demo:builder", "--as-group", "devs", "--as-group", "ops,qa", "--as-uid", "1234"},
			rest.ImpersonationConfig{UserName: "system:serviceaccount:demo:builder", Groups: []string{"devs", "ops,qa"}, UID: "1234"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags := NewConfigFlags()
			fs := pflag.NewFlagSet("minikctl", pflag.ContinueOnError)
			flags.AddFlags(fs)
			if err := fs.Parse(append([]string{"--kubeconfig", writeKubeconfig(t)}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			cfg, err := flags.ToRawKubeConfigLoader().ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Impersonate
			if got.UserName != tt.want.UserName || got.UID != tt.want.UID || !slices.Equal(got.Groups, tt.want.Groups) || len(got.Extra) != 0 {
				t.Fatalf("impersonate %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("--as-group without --as is refused before any request, in client-go's words", func(t *testing.T) {
		_, errOut, code := run(t, writeKubeconfig(t), "get", "pods", "--as-group", "devs")
		if want := "error: requesting uid, groups or user-extra for admin without impersonating a user\n"; code != 1 || errOut != want {
			t.Fatalf("exit %d, %q\nwant %q", code, errOut, want)
		}
	})
}

// TestImpersonationAgainstServer runs minikctl --as as a user who is not
// an admin: alice holds edit in demo, whose rules let her impersonate the
// service accounts of demo, and nothing more.
func TestImpersonationAgainstServer(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	admin := srv.Client(t)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		name, role string
		subject    rbacv1.Subject
	}{
		{"alice-edit", "edit", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}},
		{"builder-view", "view", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "demo"}},
	} {
		if _, err := admin.RbacV1().RoleBindings("demo").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: b.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role},
			Subjects:   []rbacv1.Subject{b.subject},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := server.UserKubeconfig(server.UserKubeconfigOptions{DataDir: srv.DataDir, User: "alice", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "alice.kubeconfig")
	if err := os.WriteFile(kc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const builder = "system:serviceaccount:demo:builder"
	// RBAC reads informer caches, a few milliseconds behind the writes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, errOut, code := run(t, kc, "auth", "can-i", "list", "configmaps", "-n", "demo", "--as", builder)
		if code == 0 && out == "yes\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("can-i list configmaps as the builder: exit %d, %q %q", code, out, errOut)
		}
		time.Sleep(10 * time.Millisecond)
	}

	t.Run("can-i answers for the service account, not for alice", func(t *testing.T) {
		if out, errOut, code := run(t, kc, "auth", "can-i", "create", "configmaps", "-n", "demo"); code != 0 || out != "yes\n" {
			t.Fatalf("alice: exit %d, %q %q", code, out, errOut)
		}
		if out, errOut, code := run(t, kc, "auth", "can-i", "create", "configmaps", "-n", "demo", "--as", builder); code != 1 || out != "no\n" {
			t.Fatalf("the builder: exit %d, %q %q", code, out, errOut)
		}
	})
	// A non-resource URL keeps discovery out: the 403 comes from the
	// access review itself.
	t.Run("a refused impersonation is kube's 403", func(t *testing.T) {
		out, errOut, code := run(t, kc, "auth", "can-i", "get", "/healthz", "--as", "bob")
		want := `Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope` + "\n"
		if code != 1 || out != "" || errOut != want {
			t.Fatalf("exit %d, %q %q\nwant %q", code, out, errOut, want)
		}
	})
	t.Run("a service account of another namespace is refused in that namespace", func(t *testing.T) {
		_, errOut, code := run(t, kc, "auth", "can-i", "get", "/healthz", "--as", "system:serviceaccount:default:builder")
		want := `Error from server (Forbidden): serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"` + "\n"
		if code != 1 || errOut != want {
			t.Fatalf("exit %d, %q\nwant %q", code, errOut, want)
		}
	})
}
