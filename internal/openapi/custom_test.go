package openapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/ptr"

	"minik/internal/api"
	"minik/internal/openapi"
	"minik/internal/registry"
	"minik/internal/testserver"
)

var cronTabGV = schema.GroupVersion{Group: "stable.minik.test", Version: "v1"}

const (
	cronTabModel     = "test.minik.stable.v1.CronTab"
	cronTabListModel = "test.minik.stable.v1.CronTabList"
	cronTabsPath     = "/apis/stable.minik.test/v1/namespaces/{namespace}/crontabs"
)

// cronTabCRD is the definition of kube's CRD walkthrough: a namespaced
// CronTab with a documented spec, the status and scale subresources, a
// selectable field, a defaulted field, an embedded resource and a field
// that keeps unknown fields.
func cronTabCRD() *apiextensionsv1.CustomResourceDefinition {
	spec := apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: "CronTabSpec is what the CronTab runs, and when.",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"cronSpec": {Type: "string", Description: "cronSpec is when to run, in cron syntax."},
			"image":    {Type: "string", Description: "image is what to run.", Default: &apiextensionsv1.JSON{Raw: []byte(`"busybox"`)}},
			"replicas": {Type: "integer"},
			"template": {Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true)},
			"extra":    {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.stable.minik.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: cronTabGV.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "crontabs", Singular: "crontab", Kind: "CronTab", ListKind: "CronTabList", ShortNames: []string{"ct"}},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: cronTabGV.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:        "object",
					Description: "CronTab runs an image on a schedule.",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   spec,
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
				},
				SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.image"}},
			}},
		},
	}
}

// established returns the CronTab definition as the API server tells the
// handler once it is Established.
func established(t *testing.T) []*registry.CustomResource {
	t.Helper()
	crd := cronTabCRD()
	crd.UID, crd.Generation = "crontab-uid", 1
	crd.Status.AcceptedNames = crd.Spec.Names
	crs, err := registry.CustomResources(crd)
	if err != nil {
		t.Fatal(err)
	}
	return crs
}

// serve answers one GET of target by h.
func serve(h http.Handler, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

func decodeV3(t *testing.T, h http.Handler, target string) *spec3.OpenAPI {
	t.Helper()
	rec := serve(h, target)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

func decodeV2(t *testing.T, h http.Handler) *spec.Swagger {
	t.Helper()
	rec := serve(h, openapi.V2Path)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", openapi.V2Path, rec.Code, rec.Body)
	}
	if _, err := openapiv2.ParseDocument(rec.Body.Bytes()); err != nil {
		t.Fatalf("v2 does not parse with gnostic: %v", err)
	}
	var doc spec.Swagger
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

func indexOf(t *testing.T, h http.Handler) map[string]string {
	t.Helper()
	rec := serve(h, openapi.V3Path)
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

func gvkExtension(s *spec.Schema) []interface{} {
	list, _ := s.Extensions["x-kubernetes-group-version-kind"].([]interface{})
	return list
}

func TestCustomResourceDocuments(t *testing.T) {
	h, err := openapi.NewHandler(registry.All(), api.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	before := indexOf(t, h)
	v2Before := serve(h, openapi.V2Path).Body.String()
	h.SetCustomResources(established(t))
	idx := indexOf(t, h)

	t.Run("the index lists the group version with the hash of its document", func(t *testing.T) {
		u, err := url.Parse(idx["apis/stable.minik.test/v1"])
		if err != nil || u.Path != "/openapi/v3/apis/stable.minik.test/v1" || u.Query().Get("hash") == "" {
			t.Fatalf("index entry = %q (%v)", idx["apis/stable.minik.test/v1"], err)
		}
		if etag := serve(h, u.Path).Header().Get("Etag"); etag != `"`+u.Query().Get("hash")+`"` {
			t.Errorf("ETag %s, index hash %s", etag, u.Query().Get("hash"))
		}
		if _, ok := idx["apis/stable.minik.test"]; ok {
			t.Error("the group is listed; kube lists only custom group versions")
		}
		for key, u := range before {
			if idx[key] != u {
				t.Errorf("built-in %s moved from %s to %s", key, u, idx[key])
			}
		}
	})

	doc := decodeV3(t, h, "/openapi/v3/apis/stable.minik.test/v1")

	t.Run("the kind's model is the CRD schema with kube's metadata", func(t *testing.T) {
		s := doc.Components.Schemas[cronTabModel]
		if s == nil {
			t.Fatalf("no %s; models %v", cronTabModel, keys(doc.Components.Schemas))
		}
		if s.Description != "CronTab runs an image on a schedule." {
			t.Errorf("description = %q", s.Description)
		}
		for _, p := range []string{"apiVersion", "kind", "metadata", "spec", "status"} {
			if _, ok := s.Properties[p]; !ok {
				t.Errorf("no property %s", p)
			}
		}
		if ref := s.Properties["metadata"].AllOf; len(ref) != 1 || ref[0].Ref.String() != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
			t.Errorf("metadata = %+v", s.Properties["metadata"])
		}
		if doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == nil {
			t.Error("ObjectMeta is not defined")
		}
		spec := s.Properties["spec"]
		if spec.Properties["cronSpec"].Description != "cronSpec is when to run, in cron syntax." || spec.Properties["image"].Default != "busybox" {
			t.Errorf("spec = %+v", spec.Properties)
		}
		tmpl := spec.Properties["template"]
		if _, ok := tmpl.Properties["apiVersion"]; !ok || !strings.Contains(strings.Join(tmpl.Required, ","), "apiVersion") {
			t.Errorf("the embedded resource lacks its type meta: %+v", tmpl)
		}
		gvk := gvkExtension(s)
		want := map[string]interface{}{"group": "stable.minik.test", "version": "v1", "kind": "CronTab"}
		if len(gvk) != 1 || !equalJSON(gvk[0], want) {
			t.Errorf("x-kubernetes-group-version-kind = %v", gvk)
		}
		if sf := s.Extensions["x-kubernetes-selectable-fields"]; !equalJSON(sf, []interface{}{map[string]interface{}{"fieldPath": "spec.image"}}) {
			t.Errorf("x-kubernetes-selectable-fields = %v", sf)
		}
	})

	t.Run("the list kind's model lists the kind", func(t *testing.T) {
		s := doc.Components.Schemas[cronTabListModel]
		if s == nil {
			t.Fatal("no list model")
		}
		if items := s.Properties["items"]; items.Items == nil || items.Items.Schema.Ref.String() != "#/components/schemas/"+cronTabModel {
			t.Errorf("items = %+v", items)
		}
		if gvk := gvkExtension(s); len(gvk) != 1 || !equalJSON(gvk[0], map[string]interface{}{"group": "stable.minik.test", "version": "v1", "kind": "CronTabList"}) {
			t.Errorf("x-kubernetes-group-version-kind = %v", gvk)
		}
	})

	t.Run("the paths are kube's for the resource's verbs", func(t *testing.T) {
		want := map[string]string{
			"/apis/stable.minik.test/v1/crontabs":                     "listStableMinikTestV1CronTabForAllNamespaces",
			cronTabsPath:                                              "listStableMinikTestV1NamespacedCronTab",
			cronTabsPath + "/{name}":                                  "readStableMinikTestV1NamespacedCronTab",
			cronTabsPath + "/{name}/status":                           "readStableMinikTestV1NamespacedCronTabStatus",
			cronTabsPath + "/{name}/scale":                            "readStableMinikTestV1NamespacedCronTabScale",
			"/apis/stable.minik.test/v1/watch/namespaces/{namespace}": "",
		}
		for p, id := range want {
			path, ok := doc.Paths.Paths[p]
			if id == "" {
				if ok {
					t.Errorf("path %s is described", p)
				}
				continue
			}
			if !ok || path.Get == nil || path.Get.OperationId != id {
				t.Errorf("path %s: %+v, want GET %s", p, path, id)
			}
		}
		if len(doc.Paths.Paths) != 5 {
			t.Errorf("paths = %v", keys(doc.Paths.Paths))
		}
		patch := doc.Paths.Paths[cronTabsPath+"/{name}"].Patch
		if patch == nil || patch.Extensions["x-kubernetes-action"] != "patch" || !hasQueryParam(patch, "fieldValidation") {
			t.Fatalf("PATCH = %+v", patch)
		}
		if _, ok := patch.RequestBody.Content["application/strategic-merge-patch+json"]; ok {
			t.Error("strategic merge patch is offered for a custom resource")
		}
		create := doc.Paths.Paths[cronTabsPath].Post
		if create.OperationId != "createStableMinikTestV1NamespacedCronTab" || create.Description != "create a CronTab" ||
			create.RequestBody.Content["application/json"].Schema.Ref.String() != "#/components/schemas/"+cronTabModel {
			t.Errorf("POST = %+v", create)
		}
		if doc.Info.Title != "Kubernetes CRD Swagger" {
			t.Errorf("info = %+v", doc.Info)
		}
	})

	t.Run("client-go's openapi3 root finds the group version", func(t *testing.T) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		dc := discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})
		root := openapi3.NewRoot(dc.OpenAPIV3())
		got, err := root.GVSpec(cronTabGV)
		if err != nil {
			t.Fatal(err)
		}
		if got.Components.Schemas[cronTabModel] == nil {
			t.Error("no CronTab schema")
		}
	})

	t.Run("v2 has the paths and models without defaults or kept-unknown properties", func(t *testing.T) {
		v2 := decodeV2(t, h)
		s, ok := v2.Definitions[cronTabModel]
		if !ok {
			t.Fatal("no CronTab definition")
		}
		spec := s.Properties["spec"]
		if spec.Properties["image"].Default != nil {
			t.Errorf("default kept in v2: %v", spec.Properties["image"].Default)
		}
		if extra := spec.Properties["extra"]; len(extra.Type) != 0 || extra.Properties != nil {
			t.Errorf("extra = %+v, want untyped", extra)
		}
		if meta := s.Properties["metadata"]; meta.Ref.String() != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
			t.Errorf("metadata = %+v", s.Properties["metadata"])
		}
		if _, ok := v2.Definitions[cronTabListModel]; !ok {
			t.Error("no CronTabList definition")
		}
		if p, ok := v2.Paths.Paths[cronTabsPath+"/{name}"]; !ok || p.Patch == nil || p.Patch.ID != "patchStableMinikTestV1NamespacedCronTab" {
			t.Errorf("path = %+v", p)
		}
		if _, ok := v2.Definitions["io.k8s.api.apps.v1.Deployment"]; !ok {
			t.Error("built-in definitions are gone")
		}
	})

	t.Run("the same resources again rebuild nothing", func(t *testing.T) {
		h.SetCustomResources(established(t))
		if got := indexOf(t, h); !equalJSON(got, idx) {
			t.Errorf("index changed: %v", got)
		}
	})

	t.Run("without custom resources the documents are the built-in ones again", func(t *testing.T) {
		h.SetCustomResources(nil)
		if got := indexOf(t, h); !equalJSON(got, before) {
			t.Errorf("index = %v", got)
		}
		if rec := serve(h, "/openapi/v3/apis/stable.minik.test/v1"); rec.Code != http.StatusNotFound {
			t.Errorf("GET group version: %d", rec.Code)
		}
		if got := serve(h, openapi.V2Path).Body.String(); got != v2Before {
			t.Error("v2 differs from the built-in document")
		}
	})
}

// TestCustomResourcesFollowDefinitions runs against minikd: the documents
// follow the definitions as they are established, changed and deleted, and
// kubectl explains and validates custom resources from them.
func TestCustomResourcesFollowDefinitions(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	ctx := context.Background()
	xc := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig)
	dc := discovery.NewDiscoveryClientForConfigOrDie(srv.RESTConfig)
	raw := func(path string) ([]byte, error) {
		return dc.RESTClient().Get().AbsPath(path).Do(ctx).Raw()
	}
	index := func() map[string]string {
		var idx struct {
			Paths map[string]struct {
				ServerRelativeURL string `json:"serverRelativeURL"`
			} `json:"paths"`
		}
		b, err := raw(openapi.V3Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &idx); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for k, v := range idx.Paths {
			out[k] = v.ServerRelativeURL
		}
		return out
	}
	cronTab := func() *spec.Schema {
		u, ok := index()["apis/stable.minik.test/v1"]
		if !ok {
			return nil
		}
		b, err := dc.RESTClient().Get().RequestURI(u).Do(ctx).Raw()
		if err != nil {
			return nil
		}
		var doc spec3.OpenAPI
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Components.Schemas[cronTabModel]
	}
	v2Has := func(model string) bool {
		b, err := raw(openapi.V2Path)
		if err != nil {
			t.Fatal(err)
		}
		var doc spec.Swagger
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		_, ok := doc.Definitions[model]
		return ok
	}

	crd, err := xc.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, cronTabCRD(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var s *spec.Schema
	eventually(t, "the CronTab model in /openapi/v3", func() bool { s = cronTab(); return s != nil })
	if _, ok := s.Properties["spec"].Properties["cronSpec"]; !ok {
		t.Errorf("spec = %+v", s.Properties["spec"])
	}
	if gvk := gvkExtension(s); len(gvk) != 1 {
		t.Errorf("x-kubernetes-group-version-kind = %v", gvk)
	}
	if !v2Has(cronTabModel) {
		t.Error("no CronTab in /openapi/v2")
	}

	t.Run("kubectl explains and validates custom resources", func(t *testing.T) {
		kubectlTests(t, srv)
	})

	t.Run("a changed schema is described", func(t *testing.T) {
		crd, err = xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["timeZone"] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: "timeZone of cronSpec."}
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		if _, err := xc.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "spec.timeZone in the CronTab model", func() bool {
			s := cronTab()
			return s != nil && s.Properties["spec"].Properties["timeZone"].Description == "timeZone of cronSpec."
		})
	})

	t.Run("a deleted definition goes", func(t *testing.T) {
		if err := xc.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the group version to leave /openapi/v3", func() bool {
			_, ok := index()["apis/stable.minik.test/v1"]
			return !ok
		})
		if _, err := raw("/openapi/v3/apis/stable.minik.test/v1"); err == nil {
			t.Error("the group version's document is still served")
		}
		if v2Has(cronTabModel) {
			t.Error("CronTab is still in /openapi/v2")
		}
	})
}

// kubectlTests runs the real kubectl, if there is one, against srv, where
// the CronTab definition is established.
func kubectlTests(t *testing.T, srv *testserver.Server) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl")
	}
	dir := t.TempDir()
	run := func(t *testing.T, stdin string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", srv.KubeconfigPath}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "KUBECACHEDIR="+filepath.Join(dir, "cache"))
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(t, "", "create", "namespace", "cron"); err != nil {
		t.Fatalf("create namespace: %v\n%s", err, out)
	}

	t.Run("get --raw /openapi/v3 lists the group version", func(t *testing.T) {
		out, err := run(t, "", "get", "--raw", "/openapi/v3")
		if err != nil || !strings.Contains(out, `"apis/stable.minik.test/v1"`) {
			t.Errorf("err %v\n%s", err, out)
		}
	})

	t.Run("explain crontab describes the kind and its fields", func(t *testing.T) {
		out, err := run(t, "", "explain", "crontab")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []string{"GROUP:      stable.minik.test", "KIND:       CronTab", "VERSION:    v1", "CronTab runs an image on a schedule.", "spec\t<Object>", "metadata\t<ObjectMeta>"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain crontab lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("explain crontab.spec describes the nested fields", func(t *testing.T) {
		out, err := run(t, "", "explain", "crontab.spec")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []string{"FIELD: spec <Object>", "CronTabSpec is what the CronTab runs, and when.", "cronSpec\t<string>", "cronSpec is when to run, in cron syntax."} {
			if !strings.Contains(out, want) {
				t.Errorf("explain crontab.spec lacks %q:\n%s", want, out)
			}
		}
	})

	const good = "apiVersion: stable.minik.test/v1\nkind: CronTab\nmetadata:\n  name: every-minute\n  namespace: cron\nspec:\n  cronSpec: '* * * * *'\n"
	t.Run("create --validate=true accepts a valid custom resource", func(t *testing.T) {
		if out, err := run(t, good, "create", "--validate=true", "-f", "-"); err != nil || !strings.Contains(out, "crontab.stable.minik.test/every-minute created") {
			t.Errorf("err %v\n%s", err, out)
		}
	})

	t.Run("apply --validate=strict refuses an unknown field", func(t *testing.T) {
		bad := strings.Replace(good, "every-minute", "bogus", 1) + "  bogus: 1\n"
		out, err := run(t, bad, "apply", "--validate=strict", "-f", "-")
		if err == nil || !strings.Contains(out, `unknown field "spec.bogus"`) {
			t.Errorf("err %v\n%s", err, out)
		}
	})

	t.Run("apply --validate=strict applies a valid change", func(t *testing.T) {
		out, err := run(t, strings.Replace(good, "'* * * * *'", "'*/5 * * * *'", 1), "apply", "--validate=strict", "-f", "-")
		if err != nil || !strings.Contains(out, "crontab.stable.minik.test/every-minute configured") {
			t.Errorf("err %v\n%s", err, out)
		}
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func equalJSON(a, b interface{}) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
