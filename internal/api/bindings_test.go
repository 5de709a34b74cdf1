package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/testserver"
)

// TestBindingsBindAsPodsBinding posts Bindings to the top-level core/v1
// bindings resource, which binds the pod its name names as pods/binding
// does, and is listed in discovery as kube lists it: create only.
func TestBindingsBindAsPodsBinding(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "demo")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}},
	}}
	if _, err := cs.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	post := func(b *corev1.Binding, dryRun bool) (*metav1.Status, error) {
		body, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		req := cs.CoreV1().RESTClient().Post().Namespace("demo").Resource("bindings").Body(body).SetHeader("Content-Type", "application/json")
		if dryRun {
			req = req.Param("dryRun", metav1.DryRunAll)
		}
		st := &metav1.Status{}
		return st, req.Do(ctx).Into(st)
	}
	binding := &corev1.Binding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "n1"},
	}

	if _, err := post(binding, true); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if got, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{}); err != nil || got.Spec.NodeName != "" {
		t.Fatalf("after a dry run the pod is on %q (%v); want unbound", got.Spec.NodeName, err)
	}
	st, err := post(binding, false)
	if err != nil || st.Status != metav1.StatusSuccess {
		t.Fatalf("bind: %v, %+v", err, st)
	}
	got, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || got.Spec.NodeName != "n1" {
		t.Fatalf("the pod is on %q (%v); want n1", got.Spec.NodeName, err)
	}
	if _, err := post(binding, false); !apierrors.IsConflict(err) || err.Error() != `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"` {
		t.Errorf("a second binding: %v; want pods/binding's conflict", err)
	}
	if err := cs.CoreV1().RESTClient().Get().Namespace("demo").Resource("bindings").Do(ctx).Error(); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("list bindings: %v; want 405", err)
	}

	list, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "bindings" })
	if i < 0 {
		t.Fatal("discovery does not list bindings")
	}
	if r := list.APIResources[i]; !r.Namespaced || r.Kind != "Binding" || !slices.Equal(r.Verbs, []string{"create"}) {
		t.Errorf("bindings in discovery: %+v; want namespaced Binding, verbs [create]", r)
	}
}
