package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"minik/internal/auth"
	"minik/internal/etcd"
	"minik/internal/storage"
)

// The fuzz targets here drive the real handler (authentication,
// authorization, decoding, patching, field management, defaulting,
// admission, validation, the allocators) over a real embedded etcd, by
// calling the Server's ServeHTTP in process: a panic anywhere on the way
// fails the target with its stack, where over the network a client would
// only see its stream reset. Writes are dry runs, so that every input
// meets the same stored objects. `make fuzz` runs each for a while; plain
// `go test` runs their seeds.

// fuzzNamespace holds the objects the fuzz targets write to.
const fuzzNamespace = "fuzz"

// fuzzTarget is one stored object requests are aimed at.
type fuzzTarget struct {
	// path is the collection's path in fuzzNamespace.
	path string
	obj  runtime.Object
	gv   schema.GroupVersion
}

// fuzzTargets are the objects fuzzed: kinds with strategic merge keys and
// nested lists (Pod, Deployment), plain maps (ConfigMap) and allocated
// fields (Service).
var fuzzTargets = []fuzzTarget{
	{path: "/api/v1/namespaces/fuzz/pods", gv: corev1.SchemeGroupVersion, obj: &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}, Finalizers: []string{"example.com/keep"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27",
				Ports:        []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Env:          []corev1.EnvVar{{Name: "A", Value: "1"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes:     []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		},
	}},
	{path: "/apis/apps/v1/namespaces/fuzz/deployments", gv: appsv1.SchemeGroupVersion, obj: &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}},
	{path: "/api/v1/namespaces/fuzz/configmaps", gv: corev1.SchemeGroupVersion, obj: &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Data:       map[string]string{"k": "v", "list": "[1,2]"},
	}},
	{path: "/api/v1/namespaces/fuzz/services", gv: corev1.SchemeGroupVersion, obj: &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}},
}

// target picks a fuzz target by a fuzzed byte.
func target(i uint8) fuzzTarget { return fuzzTargets[int(i)%len(fuzzTargets)] }

// name is the stored object's name.
func (t fuzzTarget) name() string {
	m, _ := meta.Accessor(t.obj)
	return m.GetName()
}

// adminAuthenticator makes every request the cluster admin's.
type adminAuthenticator struct{}

func (adminAuthenticator) Authenticate(*http.Request) (*auth.User, bool, error) {
	return &auth.User{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}}, true, nil
}

// testAPI is an API server over its own embedded etcd, served in process.
type testAPI struct {
	s *Server
}

// newTestAPI starts etcd in a temporary directory and an API server over
// it whose every caller is the admin, with field management on; it
// creates fuzzNamespace and the fuzzTargets' objects.
func newTestAPI(tb testing.TB) *testAPI {
	tb.Helper()
	ctx := context.Background()
	db, err := etcd.Start(ctx, etcd.Config{DataDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	s, err := New(Config{
		Store:          storage.New(db.Client),
		Authenticators: []auth.Authenticator{adminAuthenticator{}},
		Authorizers:    []auth.Authorizer{auth.MastersAuthorizer{}},
		Version:        VersionInfo{Major: "1", Minor: "37", GitVersion: "v1.37.0"},
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	s.SetReady(true)
	a := &testAPI{s: s}
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespace}}
	if rec := a.do(http.MethodPost, "/api/v1/namespaces", mediaJSON, mustJSON(tb, ns)); rec.Code != http.StatusCreated {
		tb.Fatalf("create namespace: %d %s", rec.Code, rec.Body)
	}
	for _, t := range fuzzTargets {
		if rec := a.do(http.MethodPost, t.path, mediaJSON, mustJSON(tb, t.obj)); rec.Code != http.StatusCreated {
			tb.Fatalf("create %s: %d %s", t.path, rec.Code, rec.Body)
		}
	}
	return a
}

// do serves one request in process.
func (a *testAPI) do(method, path, contentType string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	r.Header.Set("Accept", mediaJSON)
	rec := httptest.NewRecorder()
	a.s.ServeHTTP(rec, r)
	return rec
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// checkAnswer fails t unless rec is a client's answer: a 2xx with an
// object of the target's kind, or a 4xx Status of the same code. A 5xx
// for a client's input is a server bug.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder, req []byte) {
	t.Helper()
	if rec.Code >= 500 || rec.Code < 200 {
		t.Fatalf("answered %d to %q: %s", rec.Code, req, rec.Body)
	}
	var probe struct {
		Kind string `json:"kind"`
		Code int    `json:"code"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &probe); err != nil {
		t.Fatalf("answered %d with a body that is not JSON: %v: %q", rec.Code, err, rec.Body)
	}
	if rec.Code >= 300 && (probe.Kind != "Status" || probe.Code != rec.Code) {
		t.Fatalf("answered %d with %s", rec.Code, rec.Body)
	}
	if rec.Code < 300 && probe.Kind == "Status" {
		t.Fatalf("answered %d with a Status: %s", rec.Code, rec.Body)
	}
}

// fieldValidations are the fieldValidation parameters fuzzed.
var fieldValidations = []string{"", "Strict", "Warn", "Ignore"}

// bodyTypes are the body media types fuzzed for create and update.
var bodyTypes = []string{mediaJSON, "application/yaml", "application/vnd.kubernetes.protobuf"}

// encodeFor encodes obj as the body media type mt.
func encodeFor(tb testing.TB, mt string, gv schema.GroupVersion, obj runtime.Object) []byte {
	tb.Helper()
	info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mt)
	if !ok {
		tb.Fatalf("no serializer for %s", mt)
	}
	data, err := runtime.Encode(Codecs.EncoderForVersion(info.Serializer, gv), obj)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// seedBodies adds each target's object in each body type to f's corpus.
func seedBodies(f *testing.F) {
	for ti, t := range fuzzTargets {
		for bi, mt := range bodyTypes {
			f.Add(uint8(ti), uint8(bi), uint8(0), encodeFor(f, mt, t.gv, t.obj))
		}
	}
}

// FuzzCreate decodes, admits and validates create bodies (dry run).
func FuzzCreate(f *testing.F) {
	a := newTestAPI(f)
	seedBodies(f)
	f.Add(uint8(0), uint8(0), uint8(1), []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"x"},"spec":{"containers":[{"name":"a","image":"b"}]}}`))
	f.Add(uint8(1), uint8(1), uint8(2), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: e}\nspec: {replicas: x}\n"))
	f.Fuzz(func(t *testing.T, ti, bi, fv uint8, body []byte) {
		tg := target(ti)
		mt := bodyTypes[int(bi)%len(bodyTypes)]
		path := tg.path + "?dryRun=All&fieldValidation=" + fieldValidations[int(fv)%len(fieldValidations)]
		checkAnswer(t, a.do(http.MethodPost, path, mt, body), body)
	})
}

// FuzzUpdate decodes, admits and validates update bodies against the
// stored objects (dry run).
func FuzzUpdate(f *testing.F) {
	a := newTestAPI(f)
	seedBodies(f)
	f.Add(uint8(2), uint8(0), uint8(1), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","resourceVersion":"1"},"data":{"k":1}}`))
	f.Fuzz(func(t *testing.T, ti, bi, fv uint8, body []byte) {
		tg := target(ti)
		mt := bodyTypes[int(bi)%len(bodyTypes)]
		path := tg.path + "/" + tg.name() + "?dryRun=All&fieldValidation=" + fieldValidations[int(fv)%len(fieldValidations)]
		checkAnswer(t, a.do(http.MethodPut, path, mt, body), body)
	})
}

// fuzzPatch is the body of a patch fuzz target of type pt: the patch goes
// to the target's object, or to its status or scale subresource.
func fuzzPatch(a *testAPI, pt types.PatchType) func(t *testing.T, ti, sub, fv uint8, patch []byte) {
	subs := []string{"", "/status", "/scale"}
	return func(t *testing.T, ti, sub, fv uint8, patch []byte) {
		tg := target(ti)
		s := subs[int(sub)%len(subs)]
		if s == "/scale" && !strings.Contains(tg.path, "deployments") {
			s = ""
		}
		q := "?dryRun=All&fieldValidation=" + fieldValidations[int(fv)%len(fieldValidations)]
		if pt == types.ApplyYAMLPatchType {
			q += "&fieldManager=fuzz&force=true"
		}
		checkAnswer(t, a.do(http.MethodPatch, tg.path+"/"+tg.name()+s+q, string(pt), patch), patch)
	}
}

// FuzzJSONPatch applies JSON patches (RFC 6902).
func FuzzJSONPatch(f *testing.F) {
	a := newTestAPI(f)
	for _, p := range []string{
		`[{"op":"replace","path":"/metadata/labels/app","value":"x"}]`,
		`[{"op":"add","path":"/spec/containers/0/env/-","value":{"name":"B","value":"2"}}]`,
		`[{"op":"copy","from":"/metadata/labels","path":"/metadata/annotations"},{"op":"move","from":"/metadata/annotations","path":"/metadata/labels"}]`,
		`[{"op":"remove","path":"/spec/replicas"},{"op":"test","path":"/kind","value":"Deployment"}]`,
		`[{"op":"replace","path":"/spec/replicas","value":5}]`,
		`[{"op":"add","path":"/data/-1","value":"x"},{"op":"remove","path":"/spec/ports/-1"}]`,
		// The test of the document itself with no value (a nil pointer
		// in the library).
		`[{"op":"test","path":""}]`,
		`[{"op":"test","path":"","value":null}]`,
		// The replacement of the document itself with no value (the
		// same nil pointer).
		`[{"op":"replace","path":""}]`,
		`[{"op":"replace","path":"","value":null}]`,
		`[{"op":"copy","from":"","path":"/metadata/annotations/x"}]`,
	} {
		for ti := range fuzzTargets {
			f.Add(uint8(ti), uint8(0), uint8(0), []byte(p))
		}
	}
	f.Fuzz(fuzzPatch(a, types.JSONPatchType))
}

// FuzzMergePatch applies JSON merge patches (RFC 7386).
func FuzzMergePatch(f *testing.F) {
	a := newTestAPI(f)
	for _, p := range []string{
		`{"metadata":{"labels":{"app":null,"x":"y"}}}`,
		`{"spec":{"replicas":3}}`,
		`{"data":{"k":null,"n":"1"}}`,
		`{"spec":{"ports":[{"port":81}]}}`,
		`{"status":{"phase":"Running"}}`,
		`{"metadata":{"annotations":{"foo":["bar"]}}}`,
		`[]`,
		`null`,
	} {
		for ti := range fuzzTargets {
			f.Add(uint8(ti), uint8(ti), uint8(0), []byte(p))
		}
	}
	f.Fuzz(fuzzPatch(a, types.MergePatchType))
}

// FuzzStrategicMergePatch applies strategic merge patches, with their
// directives ($patch, $retainKeys, $setElementOrder, $deleteFromPrimitiveList).
func FuzzStrategicMergePatch(f *testing.F) {
	a := newTestAPI(f)
	for _, p := range []string{
		`{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}`,
		`{"spec":{"containers":[{"name":"side","image":"busybox"}],"$setElementOrder/containers":[{"name":"side"},{"name":"web"}]}}`,
		`{"spec":{"containers":[{"name":"web","$patch":"delete"}]}}`,
		`{"spec":{"volumes":[{"name":"data","$retainKeys":["name","hostPath"],"hostPath":{"path":"/x"}}]}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"A","value":"1"}]}]}}}}`,
		`{"metadata":{"finalizers":["a"],"$deleteFromPrimitiveList/finalizers":["b"]}}`,
		`{"spec":{"ports":[{"port":80,"$patch":"replace"}]}}`,
		`{"spec":{"$patch":"replace","replicas":1}}`,
		// Object-valued merge keys (uncomparable values in the library).
		`{"spec":{"containers":[{"name":{"a":1}}]}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":["x"]}]}}}}`,
		// $retainKeys naming something that is not a string.
		`{"spec":{"$retainKeys":[{"a":1}]}}`,
		`{"spec":{"volumes":[{"name":"data","$retainKeys":[["x"]]}]}}`,
		`{"spec":{"$retainKeys":"x"}}`,
		`{"spec":{"$retainKeys":[["a"]]}}`,
		`{"spec":{"containers":[{"name":"web","ports":[{"containerPort":{"a":1}}]}]}}`,
		// $setElementOrder of a list of scalars naming an object.
		`{"metadata":{"$setElementOrder/finalizers":[{"a":1}]}}`,
		`{"spec":{"$setElementOrder/containers":[{"name":{"a":1}}]}}`,
		`{"metadata":{"$deleteFromPrimitiveList/finalizers":[{"a":1}]}}`,
	} {
		for ti := range fuzzTargets {
			f.Add(uint8(ti), uint8(ti), uint8(0), []byte(p))
		}
	}
	f.Fuzz(fuzzPatch(a, types.StrategicMergePatchType))
}

// FuzzApply applies server-side apply configurations (YAML).
func FuzzApply(f *testing.F) {
	a := newTestAPI(f)
	for ti, t := range fuzzTargets {
		y, err := yaml.Marshal(t.obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(ti), uint8(0), uint8(0), y)
	}
	for _, p := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: wrong}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: [1]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: web, image: x}\n  - {name: web, image: y}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, managedFields: [{manager: x}]}\n",
		"apiVersion: v2\nkind: Pod\nmetadata: {name: p}\n",
		"[1, 2]\n",
	} {
		for ti := range fuzzTargets {
			f.Add(uint8(ti), uint8(0), uint8(1), []byte(p))
		}
	}
	f.Fuzz(fuzzPatch(a, types.ApplyYAMLPatchType))
}
