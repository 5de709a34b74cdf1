package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// loseEveryRace makes every update of the resource gvr lose its race: just
// before each compare-and-swap, another write of the same object (the
// stored bytes again, under a new revision) goes first. It returns the
// count of attempts.
func loseEveryRace(t *testing.T, a *testAPI, gvr schema.GroupVersionResource) *atomic.Int32 {
	t.Helper()
	h := a.s.handler(gvr)
	var attempts atomic.Int32
	h.beforeWrite = func(ctx context.Context, key string) {
		attempts.Add(1)
		kv, err := a.s.store.Get(ctx, key)
		if err != nil {
			t.Errorf("get %s: %v", key, err)
			return
		}
		if _, err := a.s.store.Update(ctx, key, kv.Revision, kv.Value); err != nil {
			t.Errorf("racing write of %s: %v", key, err)
		}
	}
	t.Cleanup(func() { h.beforeWrite = nil })
	return &attempts
}

func TestWritesThatLoseEveryRaceAnswerConflict(t *testing.T) {
	a := newTestAPI(t)
	running := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"r"},"spec":{"nodeName":"n1","containers":[{"name":"a","image":"b"}]}}`
	if rec := a.do(http.MethodPost, "/api/v1/namespaces/fuzz/pods", mediaJSON, []byte(running)); rec.Code != http.StatusCreated {
		t.Fatalf("create pod r: %d %s", rec.Code, rec.Body)
	}
	if rec := a.do(http.MethodPatch, "/api/v1/namespaces/fuzz/pods/r/status", "application/merge-patch+json", []byte(`{"status":{"phase":"Running"}}`)); rec.Code != http.StatusOK {
		t.Fatalf("pod r running: %d %s", rec.Code, rec.Body)
	}
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	configmaps := corev1.SchemeGroupVersion.WithResource("configmaps")
	deployments := appsv1.SchemeGroupVersion.WithResource("deployments")
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"changed"}}`
	tests := []struct {
		name                 string
		gvr                  schema.GroupVersionResource
		method, path, ctype  string
		body                 string
		resource, objectName string
	}{
		{"a merge patch", configmaps, http.MethodPatch, "/api/v1/namespaces/fuzz/configmaps/c", "application/merge-patch+json", `{"data":{"k":"changed"}}`, "configmaps", "c"},
		{"a JSON patch", configmaps, http.MethodPatch, "/api/v1/namespaces/fuzz/configmaps/c", "application/json-patch+json", `[{"op":"replace","path":"/data/k","value":"changed"}]`, "configmaps", "c"},
		{"a strategic merge patch", configmaps, http.MethodPatch, "/api/v1/namespaces/fuzz/configmaps/c", "application/strategic-merge-patch+json", `{"data":{"k":"changed"}}`, "configmaps", "c"},
		{"an update", configmaps, http.MethodPut, "/api/v1/namespaces/fuzz/configmaps/c", mediaJSON, cm, "configmaps", "c"},
		{"an apply", configmaps, http.MethodPatch, "/api/v1/namespaces/fuzz/configmaps/c?fieldManager=racer&force=true", "application/apply-patch+yaml", cm, "configmaps", "c"},
		{"a status patch", pods, http.MethodPatch, "/api/v1/namespaces/fuzz/pods/p/status", "application/merge-patch+json", `{"status":{"phase":"Running"}}`, "pods", "p"},
		{"a scale update", deployments, http.MethodPut, "/apis/apps/v1/namespaces/fuzz/deployments/d/scale", mediaJSON, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":5}}`, "deployments.apps", "d"},
		{"a scale patch", deployments, http.MethodPatch, "/apis/apps/v1/namespaces/fuzz/deployments/d/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, "deployments.apps", "d"},
		{"a binding", pods, http.MethodPost, "/api/v1/namespaces/fuzz/pods/p/binding", mediaJSON, `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}`, "pods", "p"},
		// A running pod's eviction consults budgets (there are none),
		// then marks the pod, with no precondition, before deleting it.
		{"an eviction", pods, http.MethodPost, "/api/v1/namespaces/fuzz/pods/r/eviction", mediaJSON, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"r"}}`, "pods", "r"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" answers 409 Conflict and changes nothing", func(t *testing.T) {
			attempts := loseEveryRace(t, a, tt.gvr)
			podPath := "/api/v1/namespaces/fuzz/pods/" + tt.objectName
			if tt.gvr != pods {
				podPath = "/api/v1/namespaces/fuzz/pods/p"
			}
			before := a.do(http.MethodGet, podPath, "", nil).Body.String()
			rec := a.do(tt.method, tt.path, tt.ctype, []byte(tt.body))
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatalf("answered %d with %q: %v", rec.Code, rec.Body, err)
			}
			want := `Operation cannot be fulfilled on ` + tt.resource + ` "` + tt.objectName + `": the object has been modified; please apply your changes to the latest version and try again`
			if rec.Code != http.StatusConflict || st.Reason != metav1.StatusReasonConflict || st.Message != want {
				t.Fatalf("answered %d %s %q, want 409 Conflict %q", rec.Code, st.Reason, st.Message, want)
			}
			if n := attempts.Load(); n != maxUpdateAttempts {
				t.Fatalf("tried %d times, want %d", n, maxUpdateAttempts)
			}
			var pod, was corev1.Pod
			after := a.do(http.MethodGet, podPath, "", nil)
			if err := json.Unmarshal(after.Body.Bytes(), &pod); err != nil || after.Code != http.StatusOK {
				t.Fatalf("the pod is gone: %d %s", after.Code, after.Body)
			}
			if err := json.Unmarshal([]byte(before), &was); err != nil {
				t.Fatal(err)
			}
			if pod.Spec.NodeName != was.Spec.NodeName || len(pod.Status.Conditions) != len(was.Status.Conditions) || pod.Status.Phase != was.Status.Phase || pod.DeletionTimestamp != nil {
				t.Fatalf("the pod changed although the write failed: %s, was %s", after.Body, before)
			}
		})
	}
}
