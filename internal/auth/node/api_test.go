package node_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/pki"
	"minik/internal/testserver"
)

// nodeClient is a client acting as system:node:<name> in system:nodes,
// with a certificate from the server's CA, as minikd's kubelets act.
func nodeClient(t *testing.T, srv *testserver.Server, name string) kubernetes.Interface {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.SignClient("system:node:"+name, []string{"system:nodes"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := rest.CopyConfig(srv.RESTConfig)
	c.CertData, c.KeyData = kp.CertPEM, kp.KeyPEM
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// wantForbidden fails unless err is a 403 reading msg.
func wantForbidden(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || err.Error() != msg {
		t.Fatalf("%s: err = %v\nwant 403 %s", what, err, msg)
	}
}

// waitUntil polls cond until it holds (the node authorizer's graph
// follows pods through an informer).
func waitUntil(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestNodeIsNarrowedToItsPods: a node reads only what its pods reference
// and writes only its own objects (issue 10: a node was cluster-admin in
// two steps, reading every secret and minting any service account's
// token).
func TestNodeIsNarrowedToItsPods(t *testing.T) {
	srv := testserver.Start(t)
	admin := srv.Client(t)
	n1 := nodeClient(t, srv, "minik-node-1")
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "demo", Name: name} }
	must(admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}))
	for _, name := range []string{"x", "tls"} {
		must(admin.CoreV1().Secrets("demo").Create(ctx, &corev1.Secret{ObjectMeta: meta(name), StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}))
	}
	must(admin.CoreV1().ConfigMaps("demo").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("settings")}, metav1.CreateOptions{}))
	for _, name := range []string{"web", "admin"} {
		must(admin.CoreV1().ServiceAccounts("demo").Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta(name)}, metav1.CreateOptions{}))
	}
	for _, name := range []string{"minik-node-1", "minik-node-2"} {
		must(admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
	}
	forbiddenGet := func(resource, name string) string {
		return resource + ` "` + name + `" is forbidden: User "system:node:minik-node-1" cannot get resource "` + resource +
			`" in API group "" in the namespace "demo": no relationship found between node 'minik-node-1' and this object`
	}

	t.Run("it cannot get a secret none of its pods references", func(t *testing.T) {
		_, err := n1.CoreV1().Secrets("demo").Get(ctx, "x", metav1.GetOptions{})
		wantForbidden(t, "get secret demo/x", err, forbiddenGet("secrets", "x"))
	})
	t.Run("it cannot list or watch secrets", func(t *testing.T) {
		_, err := n1.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
		wantForbidden(t, "list every secret", err, `secrets is forbidden: User "system:node:minik-node-1" cannot list resource "secrets" in API group "" at the cluster scope: can only read namespaced object of this type`)
		_, err = n1.CoreV1().Secrets("demo").List(ctx, metav1.ListOptions{})
		wantForbidden(t, "list secrets in demo", err, `secrets is forbidden: User "system:node:minik-node-1" cannot list resource "secrets" in API group "" in the namespace "demo": No Object name found`)
		_, err = n1.CoreV1().ConfigMaps("demo").Watch(ctx, metav1.ListOptions{})
		wantForbidden(t, "watch configmaps in demo", err, `configmaps is forbidden: User "system:node:minik-node-1" cannot watch resource "configmaps" in API group "" in the namespace "demo": No Object name found`)
	})
	t.Run("it cannot create a token for a service account none of its pods runs as", func(t *testing.T) {
		_, err := n1.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "admin", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		wantForbidden(t, "token for demo/admin", err, `serviceaccounts "admin" is forbidden: User "system:node:minik-node-1" cannot create resource "serviceaccounts/token" in API group "" in the namespace "demo": no relationship found between node 'minik-node-1' and this object`)
	})

	web := &corev1.Pod{ObjectMeta: meta("web"), Spec: corev1.PodSpec{
		NodeName:           "minik-node-1",
		ServiceAccountName: "web",
		Volumes:            []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}}},
		Containers: []corev1.Container{{Name: "web", Image: "nginx", EnvFrom: []corev1.EnvFromSource{{
			ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}},
		}}}},
	}}
	web, err := admin.CoreV1().Pods("demo").Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("it gets what its pod references once the pod is bound to it", func(t *testing.T) {
		waitUntil(t, "the node to read secret demo/tls", func(ctx context.Context) bool {
			_, err := n1.CoreV1().Secrets("demo").Get(ctx, "tls", metav1.GetOptions{})
			return err == nil
		})
		if _, err := n1.CoreV1().ConfigMaps("demo").Get(ctx, "settings", metav1.GetOptions{}); err != nil {
			t.Fatalf("get configmap demo/settings: %v", err)
		}
		list, err := n1.CoreV1().Secrets("demo").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=tls"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list secret demo/tls by name: %v, %v", list, err)
		}
		_, err = n1.CoreV1().Secrets("demo").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=x"})
		wantForbidden(t, "list secret demo/x by name", err, `secrets "x" is forbidden: User "system:node:minik-node-1" cannot list resource "secrets" in API group "" in the namespace "demo": no relationship found between node 'minik-node-1' and this object`)
		_, err = n1.CoreV1().Secrets("demo").Get(ctx, "x", metav1.GetOptions{})
		wantForbidden(t, "get secret demo/x", err, forbiddenGet("secrets", "x"))
	})
	t.Run("it gets a token for its pod's service account only bound to its pod", func(t *testing.T) {
		bound := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: web.UID},
		}}
		if _, err := n1.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "web", bound, metav1.CreateOptions{}); err != nil {
			t.Fatalf("token for demo/web bound to its pod: %v", err)
		}
		_, err := n1.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "web", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		wantForbidden(t, "unbound token for demo/web", err, `serviceaccounts "web" is forbidden: node requested token not bound to a pod`)
	})
	t.Run("it cannot label itself node-restriction.kubernetes.io/x", func(t *testing.T) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"node-restriction.kubernetes.io/x": "y"}}})
		_, err := n1.CoreV1().Nodes().Patch(ctx, "minik-node-1", types.MergePatchType, patch, metav1.PatchOptions{})
		wantForbidden(t, "label itself", err, `nodes "minik-node-1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x`)
		ok, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"example.com/rack": "r1"}}})
		if _, err := n1.CoreV1().Nodes().Patch(ctx, "minik-node-1", types.MergePatchType, ok, metav1.PatchOptions{}); err != nil {
			t.Fatalf("a label of its own: %v", err)
		}
	})
	t.Run("it cannot patch another node", func(t *testing.T) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"example.com/rack": "r1"}}})
		_, err := n1.CoreV1().Nodes().Patch(ctx, "minik-node-2", types.MergePatchType, patch, metav1.PatchOptions{})
		wantForbidden(t, "patch minik-node-2", err, `nodes "minik-node-2" is forbidden: node "minik-node-1" is not allowed to modify node "minik-node-2"`)
	})
	t.Run("it cannot delete a pod bound to another node", func(t *testing.T) {
		other := &corev1.Pod{ObjectMeta: meta("other"), Spec: corev1.PodSpec{NodeName: "minik-node-2", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		must(admin.CoreV1().Pods("demo").Create(ctx, other, metav1.CreateOptions{}))
		err := n1.CoreV1().Pods("demo").Delete(ctx, "other", metav1.DeleteOptions{})
		wantForbidden(t, "delete demo/other", err, `pods "other" is forbidden: node "minik-node-1" can only delete pods with spec.nodeName set to itself`)
	})
	t.Run("it loses what its pod referenced when the pod is deleted", func(t *testing.T) {
		zero := int64(0)
		if err := admin.CoreV1().Pods("demo").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the node to lose secret demo/tls", func(ctx context.Context) bool {
			_, err := n1.CoreV1().Secrets("demo").Get(ctx, "tls", metav1.GetOptions{})
			return apierrors.IsForbidden(err)
		})
		_, err := n1.CoreV1().Secrets("demo").Get(ctx, "tls", metav1.GetOptions{})
		wantForbidden(t, "get secret demo/tls", err, forbiddenGet("secrets", "tls"))
		_, err = n1.CoreV1().ConfigMaps("demo").Get(ctx, "settings", metav1.GetOptions{})
		wantForbidden(t, "get configmap demo/settings", err, forbiddenGet("configmaps", "settings"))
	})
}

// TestNodeResourceSlices: through the API server, a node publishes and
// lists its own ResourceSlices (by spec.nodeName) and no other node's.
func TestNodeResourceSlices(t *testing.T) {
	srv := testserver.Start(t)
	n1 := nodeClient(t, srv, "n1")
	ctx := context.Background()
	mk := func(name, nodeName string) *resourcev1.ResourceSlice {
		return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: &nodeName, Pool: resourcev1.ResourcePool{Name: nodeName, ResourceSliceCount: 1},
		}}
	}
	if _, err := n1.ResourceV1().ResourceSlices().Create(ctx, mk("n1-gpu", "n1"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create its own slice: %v", err)
	}
	_, err := n1.ResourceV1().ResourceSlices().Create(ctx, mk("n2-gpu", "n2"), metav1.CreateOptions{})
	wantForbidden(t, "create another node's slice", err, `resourceslices.resource.k8s.io "n2-gpu" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`)
	list, err := n1.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list its slices: %v %v", list, err)
	}
	_, err = n1.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	wantForbidden(t, "list every slice", err, `resourceslices.resource.k8s.io is forbidden: User "system:node:n1" cannot list resource "resourceslices" in API group "resource.k8s.io" at the cluster scope: can only list/watch/deletecollection resourceslices with nodeName field selector`)
	waitUntil(t, "the node to get its slice", func(ctx context.Context) bool {
		_, err := n1.ResourceV1().ResourceSlices().Get(ctx, "n1-gpu", metav1.GetOptions{})
		return err == nil
	})
	if err := n1.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}); err != nil {
		t.Fatalf("delete its slices: %v", err)
	}
}
