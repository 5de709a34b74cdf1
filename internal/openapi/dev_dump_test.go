package openapi

import (
	"net/http/httptest"
	"os"
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes/scheme"

	"minik/internal/registry"
)

func TestDevDump(t *testing.T) {
	h, err := NewHandler(registry.All())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/openapi/v3", "/openapi/v3/apis/apps/v1", "/openapi/v3/api/v1", "/openapi/v2", "/openapi/v3/apis", "/openapi/v3/version", "/openapi/v3/apis/apps"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body.String())
		}
		name := "/tmp/oadev/" + map[string]string{"/openapi/v3": "index", "/openapi/v3/apis/apps/v1": "apps_v1", "/openapi/v3/api/v1": "api_v1", "/openapi/v2": "v2", "/openapi/v3/apis": "apis", "/openapi/v3/version": "version", "/openapi/v3/apis/apps": "apps"}[p] + ".json"
		os.WriteFile(name, rec.Body.Bytes(), 0o644)
	}
}

func TestDevDefaults(t *testing.T) {
	facts, err := newTypeFacts()
	if err != nil {
		t.Fatal(err)
	}
	w := newWalker(openAPI3, facts)
	for _, r := range registry.All() {
		obj, _ := scheme.Scheme.New(r.GroupVersionKind())
		w.schemaFor(reflect.TypeOf(obj))
	}
	for name, m := range w.models {
		fs, ok := facts.fields[name]
		if !ok {
			t.Logf("not in smd: %s", name)
			continue
		}
		for p, s := range m.Properties {
			sf, ok := fs[p]
			if !ok {
				t.Logf("field not in smd: %s.%s", name, p)
				continue
			}
			if !reflect.DeepEqual(sf.Default, s.Default) {
				t.Logf("%s.%s: smd %#v rule %#v", name, p, sf.Default, s.Default)
			}
		}
	}
}
