package rbac_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/yaml"

	"minik/internal/auth"
	"minik/internal/auth/rbac"
	"minik/internal/testserver"
)

// loadKube reads one of kube-apiserver v1.37.2's golden files of its
// bootstrap policy (testdata/kube, copied unchanged from
// k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata).
func loadKube[T any](t *testing.T, file string) []T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "kube", file))
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []T }
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("%s: no objects", file)
	}
	return list.Items
}

// minikAddition tells the objects minik adds to kube's bootstrap policy:
// its own roles are named system:minik:*, and the add-ons it installs
// (CoreDNS's system:coredns) carry kube's bootstrap label as their
// manifests do.
func minikAddition(name string) bool {
	return strings.HasPrefix(name, "system:minik:") || name == "system:coredns"
}

// sameMeta compares what kube's golden states of an object's metadata:
// its labels exactly, and its annotations (the API server adds none).
func sameMeta(t *testing.T, kind, name string, want, got metav1.ObjectMeta) {
	t.Helper()
	if d := cmp.Diff(want.Labels, got.Labels, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s %s labels differ from kube's (-kube +minik):\n%s", kind, name, d)
	}
	if d := cmp.Diff(want.Annotations, got.Annotations, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s %s annotations differ from kube's (-kube +minik):\n%s", kind, name, d)
	}
}

// TestBootstrapMatchesKube lists what a fresh minikd bootstraps and
// compares it with kube-apiserver v1.37.2's golden files: every
// ClusterRole (controllers' included), ClusterRoleBinding, and Role and
// RoleBinding of kube-system and kube-public exists with kube's labels,
// annotations, aggregation rule, subjects and rules in kube's order; the
// aggregated admin, edit and view hold the rules kube's aggregation gives
// them, in its order, with minik's additions after or between them; what
// minik adds is named system:minik:*. It also checks the
// extension-apiserver-authentication ConfigMap.
func TestBootstrapMatchesKube(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)

	kubeRoles := append(loadKube[rbacv1.ClusterRole](t, "cluster-roles.yaml"), loadKube[rbacv1.ClusterRole](t, "controller-roles.yaml")...)
	kubeBindings := append(loadKube[rbacv1.ClusterRoleBinding](t, "cluster-role-bindings.yaml"), loadKube[rbacv1.ClusterRoleBinding](t, "controller-role-bindings.yaml")...)
	kubeNsRoles := loadKube[rbacv1.Role](t, "namespace-roles.yaml")
	kubeNsBindings := loadKube[rbacv1.RoleBinding](t, "namespace-role-bindings.yaml")

	liveRoles, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]*rbacv1.ClusterRole{}
	for i := range liveRoles.Items {
		live[liveRoles.Items[i].Name] = &liveRoles.Items[i]
	}
	// What kube's aggregation controller would give admin, edit and view
	// from kube's roles alone.
	var kubePtrs []*rbacv1.ClusterRole
	for i := range kubeRoles {
		kubePtrs = append(kubePtrs, kubeRoles[i].DeepCopy())
	}
	if _, err := rbac.AggregateAll(kubePtrs); err != nil {
		t.Fatal(err)
	}
	kubeAggregated := map[string][]rbacv1.PolicyRule{}
	for _, r := range kubePtrs {
		if r.AggregationRule != nil {
			kubeAggregated[r.Name] = r.Rules
		}
	}

	t.Run("every ClusterRole of kube's is served as kube has it", func(t *testing.T) {
		kubeNames := map[string]bool{}
		for _, want := range kubeRoles {
			kubeNames[want.Name] = true
			got, ok := live[want.Name]
			if !ok {
				t.Errorf("clusterrole %s is missing", want.Name)
				continue
			}
			sameMeta(t, "clusterrole", want.Name, want.ObjectMeta, got.ObjectMeta)
			if d := cmp.Diff(want.AggregationRule, got.AggregationRule); d != "" {
				t.Errorf("clusterrole %s aggregationRule differs from kube's (-kube +minik):\n%s", want.Name, d)
			}
			if want.AggregationRule != nil {
				// kube's aggregated rules, in kube's order; minik's
				// additions (rules kube's roles do not have) are set aside.
				kubeRules := kubeAggregated[want.Name]
				var ours []rbacv1.PolicyRule
				for _, r := range got.Rules {
					for _, k := range kubeRules {
						if cmp.Equal(r, k, cmpopts.EquateEmpty()) {
							ours = append(ours, r)
							break
						}
					}
				}
				if d := cmp.Diff(kubeRules, ours, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("clusterrole %s aggregated rules differ from kube's (-kube +minik):\n%s", want.Name, d)
				}
				continue
			}
			if d := cmp.Diff(want.Rules, got.Rules, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("clusterrole %s rules differ from kube's (-kube +minik):\n%s", want.Name, d)
			}
		}
		for name, r := range live {
			if !kubeNames[name] && r.Labels[rbac.BootstrapLabel] == rbac.BootstrapLabelValue && !minikAddition(name) {
				t.Errorf("clusterrole %s is bootstrapped by minik but is not kube's nor named system:minik:*", name)
			}
		}
	})

	t.Run("every ClusterRoleBinding of kube's is served as kube has it", func(t *testing.T) {
		list, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]*rbacv1.ClusterRoleBinding{}
		for i := range list.Items {
			got[list.Items[i].Name] = &list.Items[i]
		}
		kubeNames := map[string]bool{}
		for _, want := range kubeBindings {
			kubeNames[want.Name] = true
			b, ok := got[want.Name]
			if !ok {
				t.Errorf("clusterrolebinding %s is missing", want.Name)
				continue
			}
			sameMeta(t, "clusterrolebinding", want.Name, want.ObjectMeta, b.ObjectMeta)
			if d := cmp.Diff(want.RoleRef, b.RoleRef); d != "" {
				t.Errorf("clusterrolebinding %s roleRef differs from kube's (-kube +minik):\n%s", want.Name, d)
			}
			if d := cmp.Diff(want.Subjects, b.Subjects, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("clusterrolebinding %s subjects differ from kube's (-kube +minik):\n%s", want.Name, d)
			}
		}
		for name, b := range got {
			if !kubeNames[name] && b.Labels[rbac.BootstrapLabel] == rbac.BootstrapLabelValue && !minikAddition(name) {
				t.Errorf("clusterrolebinding %s is bootstrapped by minik but is not kube's nor named system:minik:*", name)
			}
		}
	})

	t.Run("kube-system's and kube-public's Roles are kube's", func(t *testing.T) {
		for _, want := range kubeNsRoles {
			got, err := cs.RbacV1().Roles(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("role %s/%s: %v", want.Namespace, want.Name, err)
				continue
			}
			sameMeta(t, "role", want.Namespace+"/"+want.Name, want.ObjectMeta, got.ObjectMeta)
			if d := cmp.Diff(want.Rules, got.Rules, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("role %s/%s rules differ from kube's (-kube +minik):\n%s", want.Namespace, want.Name, d)
			}
		}
	})

	t.Run("kube-system's and kube-public's RoleBindings are kube's", func(t *testing.T) {
		for _, want := range kubeNsBindings {
			got, err := cs.RbacV1().RoleBindings(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("rolebinding %s/%s: %v", want.Namespace, want.Name, err)
				continue
			}
			sameMeta(t, "rolebinding", want.Namespace+"/"+want.Name, want.ObjectMeta, got.ObjectMeta)
			if d := cmp.Diff(want.RoleRef, got.RoleRef); d != "" {
				t.Errorf("rolebinding %s/%s roleRef differs from kube's (-kube +minik):\n%s", want.Namespace, want.Name, d)
			}
			if d := cmp.Diff(want.Subjects, got.Subjects, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("rolebinding %s/%s subjects differ from kube's (-kube +minik):\n%s", want.Namespace, want.Name, d)
			}
		}
	})

	t.Run("extension-apiserver-authentication holds the client CA and the front proxy's request headers", func(t *testing.T) {
		cm, err := cs.CoreV1().ConfigMaps(auth.AuthenticationConfigMapNamespace).Get(ctx, auth.AuthenticationConfigMapName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// As kube-apiserver started by kubeadm (--requestheader-* flags)
		// writes them: the lists as JSON arrays, no uid headers.
		for key, want := range map[string]string{
			auth.RequestHeaderUsernameHeadersKey: `["X-Remote-User"]`,
			auth.RequestHeaderGroupHeadersKey:    `["X-Remote-Group"]`,
			auth.RequestHeaderExtraHeadersKey:    `["X-Remote-Extra-"]`,
			auth.RequestHeaderAllowedNamesKey:    `["front-proxy-client"]`,
		} {
			if got := cm.Data[key]; got != want {
				t.Errorf("%s = %q, want %q", key, got, want)
			}
		}
		if len(cm.Data) != 6 {
			t.Errorf("keys = %v, want client-ca-file and five requestheader-* keys", slices.Sorted(maps.Keys(cm.Data)))
		}
		fp, err := cert.ParseCertsPEM([]byte(cm.Data[auth.RequestHeaderClientCAKey]))
		if err != nil {
			t.Fatalf("%s: %v", auth.RequestHeaderClientCAKey, err)
		}
		if len(fp) != 1 || !fp[0].IsCA || fp[0].Subject.CommonName != "minik-front-proxy-ca" {
			t.Errorf("%s does not hold the front-proxy CA alone", auth.RequestHeaderClientCAKey)
		}
		caPEM := srv.RESTConfig.CAData
		if len(caPEM) == 0 {
			if caPEM, err = os.ReadFile(srv.RESTConfig.CAFile); err != nil {
				t.Fatal(err)
			}
		}
		want, err := cert.ParseCertsPEM(caPEM)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cert.ParseCertsPEM([]byte(cm.Data[auth.ClientCAKey]))
		if err != nil {
			t.Fatalf("%s: %v", auth.ClientCAKey, err)
		}
		if len(got) != 1 || !got[0].Equal(want[0]) {
			t.Errorf("%s holds %d certificates, not the cluster CA", auth.ClientCAKey, len(got))
		}
	})
}
