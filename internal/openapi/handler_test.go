package openapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	kubeproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"minik/internal/api"
	"minik/internal/openapi"
	"minik/internal/registry"
)

// handler is built once: the documents are large and immutable.
var handler = sync.OnceValues(func() (*openapi.Handler, error) {
	return openapi.NewHandler(registry.All(), api.Scheme)
})

func newHandler(t *testing.T) *openapi.Handler {
	t.Helper()
	h, err := handler()
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	return h
}

// get serves one request and returns the recorded response.
func get(t *testing.T, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	newHandler(t).ServeHTTP(rec, req)
	return rec
}

func v3Index(t *testing.T) map[string]string {
	t.Helper()
	rec := get(t, openapi.V3Path, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", openapi.V3Path, rec.Code, rec.Body)
	}
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &idx); err != nil {
		t.Fatalf("decode index: %v", err)
	}
	out := map[string]string{}
	for k, v := range idx.Paths {
		out[k] = v.ServerRelativeURL
	}
	return out
}

func v3Doc(t *testing.T, key string) *spec3.OpenAPI {
	t.Helper()
	rec := get(t, openapi.V3Path+"/"+key, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", key, rec.Code, rec.Body)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("decode %s: %v", key, err)
	}
	return &doc
}

func gvPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

func TestIndex(t *testing.T) {
	idx := v3Index(t)

	t.Run("lists every served group version, group and discovery root", func(t *testing.T) {
		want := []string{"api", "apis", "version"}
		for _, r := range registry.All() {
			want = append(want, gvPath(r.GroupVersion))
			if r.GroupVersion.Group != "" {
				want = append(want, "apis/"+r.GroupVersion.Group)
			}
		}
		for _, key := range want {
			if _, ok := idx[key]; !ok {
				t.Errorf("index has no %q; has %v", key, idx)
			}
		}
	})

	t.Run("links each document with the hash of its content", func(t *testing.T) {
		u, err := url.Parse(idx["apis/apps/v1"])
		if err != nil {
			t.Fatal(err)
		}
		if u.Path != "/openapi/v3/apis/apps/v1" {
			t.Errorf("path = %q", u.Path)
		}
		rec := get(t, u.Path, nil)
		if etag := rec.Header().Get("Etag"); etag != `"`+u.Query().Get("hash")+`"` {
			t.Errorf("document ETag %s does not match the index hash %s", etag, u.Query().Get("hash"))
		}
	})
}

func TestAppsV1Document(t *testing.T) {
	doc := v3Doc(t, "apis/apps/v1")

	t.Run("Deployment carries its group, version and kind", func(t *testing.T) {
		s := doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
		if s == nil {
			t.Fatal("no io.k8s.api.apps.v1.Deployment schema")
		}
		var gvks []map[string]string
		if err := s.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil {
			t.Fatal(err)
		}
		if len(gvks) != 1 || gvks[0]["group"] != "apps" || gvks[0]["version"] != "v1" || gvks[0]["kind"] != "Deployment" {
			t.Errorf("x-kubernetes-group-version-kind = %v", gvks)
		}
		if !strings.Contains(s.Description, "declarative updates") {
			t.Errorf("description = %q, want the SwaggerDoc text", s.Description)
		}
	})

	t.Run("the Deployment PATCH takes fieldValidation and every patch type", func(t *testing.T) {
		op := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].Patch
		if op == nil {
			t.Fatal("no PATCH operation")
		}
		if op.OperationId != "patchAppsV1NamespacedDeployment" {
			t.Errorf("operationId = %q", op.OperationId)
		}
		if !hasQueryParam(op, "fieldValidation") {
			t.Error("no fieldValidation query parameter")
		}
		for _, mt := range []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"} {
			if op.RequestBody.Content[mt] == nil {
				t.Errorf("request body does not accept %s", mt)
			}
		}
	})

	t.Run("fields carry patch strategies, list types and kube's special types", func(t *testing.T) {
		podSpec := doc.Components.Schemas["io.k8s.api.core.v1.PodSpec"]
		containers := podSpec.Properties["containers"]
		for ext, want := range map[string]string{
			"x-kubernetes-patch-strategy":  "merge",
			"x-kubernetes-patch-merge-key": "name",
			"x-kubernetes-list-type":       "map",
		} {
			if got, _ := containers.Extensions.GetString(ext); got != want {
				t.Errorf("containers %s = %q, want %q", ext, got, want)
			}
		}
		if q := doc.Components.Schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]; len(q.OneOf) != 2 {
			t.Errorf("Quantity = %+v, want oneOf string or number", q.SchemaProps)
		}
		if ts := doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]; ts.Format != "date-time" || !ts.Type.Contains("string") {
			t.Errorf("Time = %+v, want a date-time string", ts.SchemaProps)
		}
		if ios := doc.Components.Schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]; ios.Format != "int-or-string" {
			t.Errorf("IntOrString format = %q", ios.Format)
		}
	})
}

func hasQueryParam(op *spec3.Operation, name string) bool {
	for _, p := range op.Parameters {
		if p.Name == name && p.In == "query" {
			return true
		}
	}
	return false
}

func TestOperationIDs(t *testing.T) {
	for _, tc := range []struct {
		name, doc, path, method, want string
	}{
		{"a namespaced list names its scope", "apis/apps/v1", "/apis/apps/v1/namespaces/{namespace}/deployments", "get", "listAppsV1NamespacedDeployment"},
		{"a list across namespaces says so", "apis/apps/v1", "/apis/apps/v1/deployments", "get", "listAppsV1DeploymentForAllNamespaces"},
		{"deletecollection reads as kube spells it", "apis/apps/v1", "/apis/apps/v1/namespaces/{namespace}/deployments", "delete", "deleteAppsV1CollectionNamespacedDeployment"},
		{"a dotted group is camel-cased", "apis/rbac.authorization.k8s.io/v1", "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}", "get", "readRbacAuthorizationV1ClusterRole"},
		{"the legacy group is core", "api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/log", "get", "readCoreV1NamespacedPodLog"},
		{"a subresource follows the kind", "api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/binding", "post", "createCoreV1NamespacedPodBinding"},
		{"the scale subresource keeps the parent kind", "apis/apps/v1", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "patch", "patchAppsV1NamespacedDeploymentScale"},
		{"a group document reads its group", "apis/apps", "/apis/apps/", "get", "getAppsAPIGroup"},
		{"pods resize in place", "api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/resize", "patch", "patchCoreV1NamespacedPodResize"},
		{"ephemeral containers are a subresource", "api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers", "get", "readCoreV1NamespacedPodEphemeralcontainers"},
		{"namespaces are finalized by a replace", "api/v1", "/api/v1/namespaces/{name}/finalize", "put", "replaceCoreV1NamespaceFinalize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := v3Doc(t, tc.doc).Paths.Paths[tc.path]
			if p == nil {
				t.Fatalf("no path %s", tc.path)
			}
			op := map[string]*spec3.Operation{"get": p.Get, "post": p.Post, "put": p.Put, "patch": p.Patch, "delete": p.Delete}[tc.method]
			if op == nil {
				t.Fatalf("no %s on %s", tc.method, tc.path)
			}
			if op.OperationId != tc.want {
				t.Errorf("operationId = %q, want %q", op.OperationId, tc.want)
			}
		})
	}
}

// Namespaces are not deleted as a collection: kube's document has no
// deletecollection for them.
func TestNoDeleteCollectionOfNamespaces(t *testing.T) {
	p := v3Doc(t, "api/v1").Paths.Paths["/api/v1/namespaces"]
	if p == nil {
		t.Fatal("no path /api/v1/namespaces")
	}
	if p.Delete != nil || p.Get == nil || p.Post == nil {
		t.Errorf("/api/v1/namespaces: delete %v, get %v, post %v; want list and create only", p.Delete != nil, p.Get != nil, p.Post != nil)
	}
	if p := v3Doc(t, "api/v1").Paths.Paths["/api/v1/namespaces/{namespace}/pods/{name}/resize"]; p == nil || p.Delete != nil || p.Post != nil || p.Put == nil {
		t.Errorf("pods/resize: %+v; want get, replace and patch", p)
	}
}

// TestEveryResource checks, for each served kind, what kubectl's
// --validate=strict does (cli-runtime's queryParamVerifierV3): the first
// PATCH operation tagged with the kind must take fieldValidation.
func TestEveryResource(t *testing.T) {
	for _, r := range registry.All() {
		gvk := r.GroupVersionKind()
		t.Run(r.GroupResource().String()+" are patched with fieldValidation", func(t *testing.T) {
			doc := v3Doc(t, gvPath(r.GroupVersion))
			found := false
			for path, item := range doc.Paths.Paths {
				if item.Patch == nil {
					continue
				}
				var got map[string]string
				if err := item.Patch.Extensions.GetObject("x-kubernetes-group-version-kind", &got); err != nil {
					t.Fatal(err)
				}
				if got["group"] != gvk.Group || got["version"] != gvk.Version || got["kind"] != gvk.Kind {
					continue
				}
				found = true
				if !hasQueryParam(item.Patch, "fieldValidation") {
					t.Errorf("PATCH %s has no fieldValidation", path)
				}
			}
			if !found {
				t.Error("no PATCH operation of the kind")
			}
			if doc.Components.Schemas[modelName(t, doc, gvk)] == nil {
				t.Error("no schema of the kind")
			}
		})
	}
}

// modelName finds the schema carrying gvk, as kubectl's apply does.
func modelName(t *testing.T, doc *spec3.OpenAPI, gvk schema.GroupVersionKind) string {
	t.Helper()
	for name, s := range doc.Components.Schemas {
		var gvks []map[string]string
		if err := s.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil {
			continue
		}
		for _, g := range gvks {
			if g["group"] == gvk.Group && g["version"] == gvk.Version && g["kind"] == gvk.Kind {
				return name
			}
		}
	}
	return ""
}

func TestClients(t *testing.T) {
	srv := httptest.NewServer(newHandler(t))
	defer srv.Close()
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("client-go's openapi3 root finds the Deployment schema", func(t *testing.T) {
		root := openapi3.NewRoot(dc.OpenAPIV3())
		gvs, err := root.GroupVersions()
		if err != nil {
			t.Fatal(err)
		}
		if !containsGV(gvs, appsv1.SchemeGroupVersion) {
			t.Errorf("GroupVersions() = %v, want apps/v1 among them", gvs)
		}
		doc, err := root.GVSpec(appsv1.SchemeGroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"] == nil {
			t.Error("no Deployment schema")
		}
	})

	t.Run("kubectl apply's patch metadata merges containers by name", func(t *testing.T) {
		doc, err := openapi3.NewRoot(dc.OpenAPIV3()).GVSpec(appsv1.SchemeGroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		meta := strategicpatch.PatchMetaFromOpenAPIV3{
			Schema:     doc.Components.Schemas[modelName(t, doc, appsv1.SchemeGroupVersion.WithKind("Deployment"))],
			SchemaList: doc.Components.Schemas,
		}
		original := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"},{"name":"log","image":"busybox"}]}}}}`)
		modified := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"},{"name":"log","image":"busybox"}]}}}}`)
		patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, original, meta, false)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"log"}],"containers":[{"image":"nginx:2","name":"web"}]}}}}`
		if string(patch) != want {
			t.Errorf("patch = %s\nwant    %s", patch, want)
		}
	})

	t.Run("the v2 protobuf document loads as kubectl's models", func(t *testing.T) {
		doc, err := dc.OpenAPISchema()
		if err != nil {
			t.Fatal(err)
		}
		models, err := kubeproto.NewOpenAPIData(doc)
		if err != nil {
			t.Fatal(err)
		}
		deployment, ok := models.LookupModel("io.k8s.api.apps.v1.Deployment").(*kubeproto.Kind)
		if !ok {
			t.Fatal("no Deployment kind among the v2 models")
		}
		if _, ok := deployment.Fields["spec"]; !ok {
			t.Errorf("Deployment fields = %v, want spec", deployment.Keys())
		}
	})
}

func containsGV(gvs []schema.GroupVersion, gv schema.GroupVersion) bool {
	for _, g := range gvs {
		if g == gv {
			return true
		}
	}
	return false
}

func TestV2Document(t *testing.T) {
	t.Run("JSON parses with gnostic and describes every group", func(t *testing.T) {
		rec := get(t, openapi.V2Path, nil)
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		doc, err := openapiv2.ParseDocument(rec.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		paths := map[string]bool{}
		for _, p := range doc.GetPaths().GetPath() {
			paths[p.Name] = true
		}
		for _, p := range []string{"/api/v1/namespaces/{namespace}/pods/{name}/log", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "/version/"} {
			if !paths[p] {
				t.Errorf("no path %s", p)
			}
		}
		var raw struct {
			Definitions map[string]spec.Schema `json:"definitions"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		if ios := raw.Definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]; !ios.Type.Contains("string") || ios.Format != "int-or-string" {
			t.Errorf("IntOrString = %+v, want v2's string/int-or-string", ios.SchemaProps)
		}
	})

	t.Run("protobuf is served when asked for", func(t *testing.T) {
		rec := get(t, openapi.V2Path, http.Header{"Accept": {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}})
		if ct := rec.Header().Get("Content-Type"); ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
			t.Errorf("Content-Type = %q", ct)
		}
		var doc openapiv2.Document
		if err := proto.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.GetSwagger() != "2.0" {
			t.Errorf("swagger = %q", doc.GetSwagger())
		}
	})
}

func TestHTTP(t *testing.T) {
	idx := v3Index(t)
	current := idx["apis/apps/v1"]
	etag := get(t, current, nil).Header().Get("Etag")

	t.Run("a hashed URL is cached forever", func(t *testing.T) {
		rec := get(t, current, nil)
		if cc := rec.Header().Get("Cache-Control"); cc != "public, immutable" {
			t.Errorf("Cache-Control = %q", cc)
		}
		if rec.Header().Get("Expires") == "" {
			t.Error("no Expires")
		}
	})

	t.Run("an unhashed URL is not marked immutable", func(t *testing.T) {
		if cc := get(t, "/openapi/v3/apis/apps/v1", nil).Header().Get("Cache-Control"); cc != "" {
			t.Errorf("Cache-Control = %q", cc)
		}
	})

	t.Run("a stale hash redirects to the current one", func(t *testing.T) {
		rec := get(t, "/openapi/v3/apis/apps/v1?hash=0123", nil)
		if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != current {
			t.Errorf("got %d Location %q, want 301 to %q", rec.Code, rec.Header().Get("Location"), current)
		}
	})

	t.Run("a matching If-None-Match is not modified", func(t *testing.T) {
		rec := get(t, current, http.Header{"If-None-Match": {etag}})
		if rec.Code != http.StatusNotModified {
			t.Errorf("status = %d, want 304", rec.Code)
		}
	})

	t.Run("the v3 protobuf form parses", func(t *testing.T) {
		rec := get(t, current, http.Header{"Accept": {"application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}})
		var doc openapiv3.Document
		if err := proto.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.GetOpenapi() != "3.0.0" {
			t.Errorf("openapi = %q", doc.GetOpenapi())
		}
		if got := rec.Header().Get("Etag"); got != etag {
			t.Errorf("ETag = %s, want the JSON document's %s", got, etag)
		}
	})

	for _, tc := range []struct {
		name   string
		method string
		target string
		accept string
		want   int
	}{
		{"an unknown group version is not found", http.MethodGet, "/openapi/v3/apis/nope.minik.test/v1", "", http.StatusNotFound},
		{"an unserved media type is not acceptable", http.MethodGet, "/openapi/v3/apis/apps/v1", "text/html", http.StatusNotAcceptable},
		{"writes are not allowed", http.MethodPost, "/openapi/v2", "", http.StatusMethodNotAllowed},
		{"HEAD is answered", http.MethodHead, "/openapi/v3", "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec := httptest.NewRecorder()
			newHandler(t).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				body, _ := io.ReadAll(rec.Body)
				t.Errorf("status = %d, want %d (%s)", rec.Code, tc.want, body)
			}
		})
	}
}
