package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func mustUnstructured(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	objs, errs := decodeManifest(strings.NewReader(manifest), "test.yaml")
	if len(errs) > 0 || len(objs) != 1 {
		t.Fatalf("decode: %v %v", objs, errs)
	}
	return objs[0].Object
}

const deploymentManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`

func TestModifiedConfigurationIsKubectlsLastApplied(t *testing.T) {
	obj := mustUnstructured(t, deploymentManifest)
	got, err := modifiedConfiguration(obj, false)
	if err != nil {
		t.Fatal(err)
	}
	// kubectl's annotation: sorted keys, an empty annotations map, a
	// trailing newline.
	want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"demo"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"image":"nginx:1.27","name":"nginx"}]}}}}` + "\n"
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	annotated, err := modifiedConfiguration(obj, true)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(annotated, &m); err != nil {
		t.Fatal(err)
	}
	annots := m["metadata"].(map[string]any)["annotations"].(map[string]any)
	if annots[lastAppliedAnnotation] != want {
		t.Errorf("annotated configuration carries %q, want %q", annots[lastAppliedAnnotation], want)
	}

	if err := createApplyAnnotation(obj); err != nil {
		t.Fatal(err)
	}
	if got := obj.GetAnnotations()[lastAppliedAnnotation]; got != want {
		t.Errorf("createApplyAnnotation set %q, want %q", got, want)
	}
}

// live returns what a server would hold after applying manifest: the
// manifest with its last-applied annotation, plus server fields.
func live(t *testing.T, manifest string, extra func(u *unstructured.Unstructured)) []byte {
	t.Helper()
	obj := mustUnstructured(t, manifest)
	if err := createApplyAnnotation(obj); err != nil {
		t.Fatal(err)
	}
	obj.SetResourceVersion("7")
	obj.SetUID("1234")
	if extra != nil {
		extra(obj)
	}
	data, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestThreeWayPatch(t *testing.T) {
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	serverDefaults := func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(600), "spec", "progressDeadlineSeconds")
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["imagePullPolicy"] = "IfNotPresent"
		_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
		_ = unstructured.SetNestedField(u.Object, int64(3), "status", "replicas")
	}
	tests := []struct {
		name     string
		gvk      schema.GroupVersionKind
		applied  string // what was applied last (and is live, with server fields)
		manifest string // what is applied now
		want     string
		wantType types.PatchType
	}{
		{name: "the same manifest again gives an empty patch, whatever the server added",
			gvk: deployment, applied: deploymentManifest, manifest: deploymentManifest,
			want: `{}`, wantType: types.StrategicMergePatchType},
		{name: "a changed field is patched along with the annotation",
			gvk: deployment, applied: deploymentManifest, manifest: strings.Replace(deploymentManifest, "replicas: 3", "replicas: 5", 1),
			want:     `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"web\",\"namespace\":\"demo\"},\"spec\":{\"replicas\":5,\"template\":{\"spec\":{\"containers\":[{\"image\":\"nginx:1.27\",\"name\":\"nginx\"}]}}}}\n"}},"spec":{"replicas":5}}`,
			wantType: types.StrategicMergePatchType},
		{name: "a field dropped from the manifest is deleted",
			gvk: deployment, applied: deploymentManifest, manifest: strings.Replace(deploymentManifest, "  replicas: 3\n", "", 1),
			want:     `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"web\",\"namespace\":\"demo\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"nginx:1.27\",\"name\":\"nginx\"}]}}}}\n"}},"spec":{"replicas":null}}`,
			wantType: types.StrategicMergePatchType},
		{name: "containers merge by name, keeping fields the server set",
			gvk: deployment, applied: deploymentManifest, manifest: strings.Replace(deploymentManifest, "nginx:1.27", "nginx:1.28", 1),
			want:     `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"web\",\"namespace\":\"demo\"},\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"containers\":[{\"image\":\"nginx:1.28\",\"name\":\"nginx\"}]}}}}\n"}},"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:1.28","name":"nginx"}]}}}}`,
			wantType: types.StrategicMergePatchType},
		{name: "unknown kinds get a JSON merge patch",
			gvk:      schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			applied:  "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 1\n  items: [a, b]\n",
			manifest: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 1\n  items: [a]\n",
			want:     `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"annotations\":{},\"name\":\"w\"},\"spec\":{\"items\":[\"a\"],\"size\":1}}\n"}},"spec":{"items":["a"]}}`,
			wantType: types.MergePatchType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current := live(t, tt.applied, func(u *unstructured.Unstructured) {
				if tt.gvk == deployment {
					serverDefaults(u)
				}
			})
			var cur unstructured.Unstructured
			if err := cur.UnmarshalJSON(current); err != nil {
				t.Fatal(err)
			}
			obj := mustUnstructured(t, tt.manifest)
			modified, err := modifiedConfiguration(obj, true)
			if err != nil {
				t.Fatal(err)
			}
			patch, pt, err := threeWayPatch(tt.gvk, originalConfiguration(&cur), modified, current)
			if err != nil {
				t.Fatal(err)
			}
			if string(patch) != tt.want {
				t.Errorf("patch\n got  %s\n want %s", patch, tt.want)
			}
			if pt != tt.wantType {
				t.Errorf("patch type %s, want %s", pt, tt.wantType)
			}
		})
	}
}

// kubectl checks for mergepatch.ErrPreconditionFailed, but the JSON merge
// patch reports a plain error, so the message is the precondition's.
func TestThreeWayJSONMergePatchRefusesToRename(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	current := live(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n", nil)
	var cur unstructured.Unstructured
	if err := cur.UnmarshalJSON(current); err != nil {
		t.Fatal(err)
	}
	modified, err := modifiedConfiguration(mustUnstructured(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: other\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = threeWayPatch(gvk, originalConfiguration(&cur), modified, current)
	if err == nil || !strings.HasPrefix(err.Error(), "precondition failed for: ") {
		t.Errorf("err = %v, want a failed precondition", err)
	}
}

func TestPruneNulls(t *testing.T) {
	obj := mustUnstructured(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: null\ndata:\n  a: null\n  b: x\nlist:\n- {k: null, v: 1}\n")
	pruneNulls(obj.Object)
	data, _ := json.Marshal(obj.Object)
	want := `{"apiVersion":"v1","data":{"b":"x"},"kind":"ConfigMap","list":[{"v":1}],"metadata":{"name":"c"}}`
	if string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
}
