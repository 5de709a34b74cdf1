package garbagecollector_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/garbagecollector"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

func start(t testing.TB, ns string) (kubernetes.Interface, context.Context) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{garbagecollector.Name, replicaset.Name}})
	cs, ctx := srv.Client(t), t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cs, ctx
}

// ownedBy returns a reference to a ConfigMap owner.
func ownedBy(owner *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: &block}
}

func configMap(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, finalizers []string, refs ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, OwnerReferences: refs, Finalizers: finalizers}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func gone(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) bool {
	t.Helper()
	_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

func getCM(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func deleteWith(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, p metav1.DeletionPropagation) {
	t.Helper()
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
		t.Fatal(err)
	}
}

func TestBackgroundDeletion(t *testing.T) {
	const ns = "gc-background"
	cs, ctx := start(t, ns)
	owner := configMap(ctx, t, cs, ns, "owner", nil)
	other := configMap(ctx, t, cs, ns, "other-owner", nil)
	child := configMap(ctx, t, cs, ns, "child", nil, ownedBy(owner, false))
	configMap(ctx, t, cs, ns, "grandchild", nil, ownedBy(child, true))
	configMap(ctx, t, cs, ns, "shared", nil, ownedBy(owner, false), ownedBy(other, false))
	secret, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "child-secret", OwnerReferences: []metav1.OwnerReference{ownedBy(owner, true)}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	deleteWith(ctx, t, cs, ns, "owner", metav1.DeletePropagationBackground)
	if !gone(ctx, t, cs, ns, "owner") {
		t.Fatal("in the background, the owner should go at once")
	}

	t.Run("dependents of any kind, and theirs, are deleted once the owner is gone", func(t *testing.T) {
		ctrltest.Wait(t, "child, grandchild and secret deleted", func() bool {
			_, err := cs.CoreV1().Secrets(ns).Get(ctx, secret.Name, metav1.GetOptions{})
			return gone(ctx, t, cs, ns, "child") && gone(ctx, t, cs, ns, "grandchild") && apierrors.IsNotFound(err)
		})
	})

	t.Run("a dependent with another owner stays, without the reference to the deleted one", func(t *testing.T) {
		ctrltest.Wait(t, "the reference to the deleted owner removed", func() bool {
			return len(getCM(ctx, t, cs, ns, "shared").OwnerReferences) == 1
		})
		if refs := getCM(ctx, t, cs, ns, "shared").OwnerReferences; refs[0].UID != other.UID {
			t.Errorf("references left %+v, want only other-owner", refs)
		}
	})
}

func TestDanglingReferences(t *testing.T) {
	const ns = "gc-dangling"
	cs, ctx := start(t, ns)
	t.Run("an object whose owner never existed is deleted", func(t *testing.T) {
		configMap(ctx, t, cs, ns, "stray", nil, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "nowhere", UID: "0b4e7c2a-0000-4000-8000-000000000001"})
		ctrltest.Wait(t, "stray deleted", func() bool { return gone(ctx, t, cs, ns, "stray") })
	})
	t.Run("an owner is found by UID: one of the same name but another UID does not count", func(t *testing.T) {
		namesake := configMap(ctx, t, cs, ns, "namesake", nil)
		ref := ownedBy(namesake, false)
		ref.UID = types.UID("0b4e7c2a-0000-4000-8000-000000000002")
		configMap(ctx, t, cs, ns, "impostor-child", nil, ref)
		keeper := configMap(ctx, t, cs, ns, "true-child", nil, ownedBy(namesake, false))
		ctrltest.Wait(t, "impostor-child deleted", func() bool { return gone(ctx, t, cs, ns, "impostor-child") })
		if gone(ctx, t, cs, ns, keeper.Name) {
			t.Error("a dependent of an existing owner was deleted")
		}
	})
}

func TestForegroundDeletion(t *testing.T) {
	const ns = "gc-foreground"
	cs, ctx := start(t, ns)
	owner := configMap(ctx, t, cs, ns, "owner", nil)
	// The blocking dependent carries a finalizer of its own, so it stays,
	// marked, until the test lets it go.
	configMap(ctx, t, cs, ns, "blocker", []string{"example.com/hold"}, ownedBy(owner, true))
	configMap(ctx, t, cs, ns, "bystander", nil, ownedBy(owner, false))

	deleteWith(ctx, t, cs, ns, "owner", metav1.DeletePropagationForeground)

	t.Run("the owner stays, marked, while a blocking dependent exists", func(t *testing.T) {
		ctrltest.Wait(t, "bystander deleted and blocker marked", func() bool {
			return gone(ctx, t, cs, ns, "bystander") && getCM(ctx, t, cs, ns, "blocker").DeletionTimestamp != nil
		})
		o := getCM(ctx, t, cs, ns, "owner")
		if o.DeletionTimestamp == nil || !slices.Contains(o.Finalizers, metav1.FinalizerDeleteDependents) {
			t.Fatalf("owner deletionTimestamp %v, finalizers %v: want marked with %s", o.DeletionTimestamp, o.Finalizers, metav1.FinalizerDeleteDependents)
		}
	})

	t.Run("the owner goes once the blocking dependent is gone", func(t *testing.T) {
		if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "blocker", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "owner deleted", func() bool { return gone(ctx, t, cs, ns, owner.Name) })
	})

	t.Run("a Deployment's ReplicaSet and pods are all gone before the Deployment", func(t *testing.T) {
		labels := map[string]string{"app": "web"}
		two := int32(2)
		template := corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
		}
		// No deployment controller runs: the test plays its part and
		// creates the ReplicaSet the Deployment owns.
		d, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web-abc", OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
			Spec: appsv1.ReplicaSetSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "2 pods", func() bool { return len(pods(ctx, t, cs, ns)) == 2 })

		fg := metav1.DeletePropagationForeground
		if err := cs.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the Deployment deleted", func() bool {
			_, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if left := pods(ctx, t, cs, ns); len(left) != 0 || len(rss.Items) != 0 {
			t.Errorf("the Deployment went while %d pods and %d ReplicaSets remained", len(left), len(rss.Items))
		}
	})
}

func pods(ctx context.Context, t testing.TB, cs kubernetes.Interface, ns string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestOrphanDeletion(t *testing.T) {
	const ns = "gc-orphan"
	cs, ctx := start(t, ns)
	labels := map[string]string{"app": "web"}
	two := int32(2)
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "2 pods", func() bool { return len(pods(ctx, t, cs, ns)) == 2 })

	orphan := metav1.DeletePropagationOrphan
	if err := cs.AppsV1().ReplicaSets(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the ReplicaSet deleted", func() bool {
		_, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	left := pods(ctx, t, cs, ns)
	if len(left) != 2 {
		t.Fatalf("%d pods left, want the 2 orphans", len(left))
	}
	for _, p := range left {
		if len(p.OwnerReferences) != 0 {
			t.Errorf("orphan %s still references %+v", p.Name, p.OwnerReferences)
		}
	}

	t.Run("orphans of a configmap keep their other owners", func(t *testing.T) {
		owner := configMap(ctx, t, cs, ns, "owner", nil)
		other := configMap(ctx, t, cs, ns, "other", nil)
		configMap(ctx, t, cs, ns, "dep", nil, ownedBy(owner, true), ownedBy(other, false))
		deleteWith(ctx, t, cs, ns, "owner", metav1.DeletePropagationOrphan)
		ctrltest.Wait(t, "the owner deleted", func() bool { return gone(ctx, t, cs, ns, "owner") })
		refs := getCM(ctx, t, cs, ns, "dep").OwnerReferences
		if len(refs) != 1 || refs[0].UID != other.UID {
			t.Errorf("dep references %+v, want only other", refs)
		}
	})
}

func TestResourcesWithoutClientGoTypes(t *testing.T) {
	const ns = "gc-untyped"
	// HTTPRoutes are served from the Gateway API CRDs minikd installs.
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{garbagecollector.Name, "crd"}})
	srv.WaitForGatewayAPI(t)
	cs, ctx := srv.Client(t), t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	owner := configMap(ctx, t, cs, ns, "owner", nil)
	route := `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"web","ownerReferences":[` +
		`{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"` + string(owner.UID) + `"}]},"spec":{}}`
	path := "/apis/gateway.networking.k8s.io/v1/namespaces/" + ns + "/httproutes"
	rc := cs.Discovery().RESTClient()
	if err := rc.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body([]byte(route)).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	deleteWith(ctx, t, cs, ns, "owner", metav1.DeletePropagationBackground)
	ctrltest.Wait(t, "the HTTPRoute owned by the deleted ConfigMap deleted", func() bool {
		err := rc.Get().AbsPath(path + "/web").Do(ctx).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return apierrors.IsNotFound(err)
	})
}

// TestOwnerOfANewKindDeletedBeforeItIsWatched deletes a custom resource
// moments after its definition appears, before the collector has
// rediscovered the API and watches the kind: its dependent must still go
// once the collector does.
func TestOwnerOfANewKindDeletedBeforeItIsWatched(t *testing.T) {
	const ns = "gc-new-kind"
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{garbagecollector.Name, "crd"}})
	cs, ctx := srv.Client(t), t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xc := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "owners.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "owners", Singular: "owner", Kind: "Owner"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
		},
	}
	if _, err := xc.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	owners := dynamic.NewForConfigOrDie(srv.RESTConfig).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "owners"}).Namespace(ns)
	var owner *unstructured.Unstructured
	ctrltest.Wait(t, "the custom resource to be served", func() bool {
		var err error
		owner, err = owners.Create(ctx, &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "example.com/v1", "kind": "Owner", "metadata": map[string]interface{}{"name": "o"}}}, metav1.CreateOptions{})
		return err == nil
	})
	configMap(ctx, t, cs, ns, "dependent", nil, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Owner", Name: "o", UID: owner.GetUID()})
	if err := owners.Delete(ctx, "o", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the dependent of the deleted custom resource to be collected", func() bool {
		return gone(ctx, t, cs, ns, "dependent")
	})
}
