package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// decode turns a YAML manifest into its typed object, as the generic REST
// layer does with a request body.
func decode(t *testing.T, manifest string) runtime.Object {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatalf("manifest is not YAML: %v", err)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(j, nil, nil)
	if err != nil {
		t.Fatalf("decode manifest: %v", err)
	}
	return obj
}

// strategyOf returns the strategy of an object's kind, as All serves it.
func strategyOf(obj runtime.Object) Strategy {
	gvk := obj.GetObjectKind().GroupVersionKind()
	for _, r := range All() {
		if r.GroupVersionKind() == gvk {
			return r.Strategy
		}
	}
	panic(fmt.Sprintf("%v is not served", gvk))
}

// defaulted applies the strategy's defaults, as the generic layer does
// before preparation.
func defaulted(obj runtime.Object) runtime.Object {
	if s := strategyOf(obj); s.Default != nil {
		s.Default(obj)
	}
	return obj
}

// create runs a new object through Default, PrepareForCreate and Validate,
// in the generic layer's order, and returns the validation errors.
func create(obj runtime.Object) field.ErrorList {
	s := strategyOf(obj)
	defaulted(obj)
	if s.PrepareForCreate != nil {
		s.PrepareForCreate(context.Background(), obj)
	}
	return s.Validate(context.Background(), obj)
}

// update runs an updated object through Default, PrepareForUpdate and
// ValidateUpdate against old, which has gone through create.
func update(obj, old runtime.Object) field.ErrorList {
	s := strategyOf(obj)
	defaulted(obj)
	if s.PrepareForUpdate != nil {
		s.PrepareForUpdate(context.Background(), obj, old)
	}
	return s.ValidateUpdate(context.Background(), obj, old)
}

// invalid renders errors as the 422 Status message of the request.
func invalid(obj runtime.Object, errs field.ErrorList) string {
	if len(errs) == 0 {
		return ""
	}
	name := ""
	if m, err := meta.Accessor(obj); err == nil {
		name = m.GetName()
	}
	return apierrors.NewInvalid(obj.GetObjectKind().GroupVersionKind().GroupKind(), name, errs).Error()
}

// sameJSON compares an object with the expected YAML, field by field.
func sameJSON(t *testing.T, got runtime.Object, want string) {
	t.Helper()
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := yaml.YAMLToJSON([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	_ = json.Unmarshal(gotJSON, &g)
	_ = json.Unmarshal(wantJSON, &w)
	gy, _ := yaml.Marshal(g)
	wy, _ := yaml.Marshal(w)
	if string(gy) != string(wy) {
		t.Errorf("got\n%s\nwant\n%s", gy, wy)
	}
}
