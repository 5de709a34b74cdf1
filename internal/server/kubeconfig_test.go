package server_test

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"minik/internal/server"
	"minik/internal/testserver"
)

// whoami returns who a kubeconfig authenticates as.
func whoami(t *testing.T, kubeconfig []byte) authenticationv1.UserInfo {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.UserInfo
}

func TestUserKubeconfig(t *testing.T) {
	srv := testserver.Start(t)
	t.Run("it authenticates as the user in its groups", func(t *testing.T) {
		data, err := server.UserKubeconfig(server.UserKubeconfigOptions{DataDir: srv.DataDir, User: "viewer", Groups: []string{"viewers", "qa"}, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		u := whoami(t, data)
		// The certificate's organizations are a DER set: they come back sorted.
		if u.Username != "viewer" || !slices.Equal(u.Groups, []string{"qa", "viewers", "system:authenticated"}) {
			t.Fatalf("user %+v", u)
		}
		cfg, _ := clientcmd.Load(data)
		if cfg.CurrentContext != "viewer@minik" || cfg.Contexts["viewer@minik"].Namespace != "default" {
			t.Fatalf("contexts %v (current %s)", cfg.Contexts, cfg.CurrentContext)
		}
	})
	t.Run("minikd kubeconfig prints it", func(t *testing.T) {
		var out, errOut bytes.Buffer
		cmd := exec.Command(minikdBinary, "kubeconfig", "--data-dir", srv.DataDir, "--user", "ci", "--group", "deployers", "--ttl", "10m")
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %s", err, errOut.String())
		}
		if u := whoami(t, out.Bytes()); u.Username != "ci" || !slices.Contains(u.Groups, "deployers") {
			t.Fatalf("user %+v", u)
		}
	})
	t.Run("the flags are checked and named", func(t *testing.T) {
		for _, c := range []struct {
			o    server.UserKubeconfigOptions
			want string
		}{
			{server.UserKubeconfigOptions{DataDir: srv.DataDir, TTL: time.Hour}, "--user is required"},
			{server.UserKubeconfigOptions{DataDir: srv.DataDir, User: "x"}, "--ttl 0s: must be positive"},
			{server.UserKubeconfigOptions{DataDir: t.TempDir(), User: "x", TTL: time.Hour}, "no CA in"},
		} {
			if _, err := server.UserKubeconfig(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: err = %v, want %q", c.o, err, c.want)
			}
		}
	})
}
