package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	builder3util "k8s.io/kube-openapi/pkg/builder3/util"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// dialect is the OpenAPI version a walker writes schemas for. The two differ
// only in where references point, in how the special types (Quantity,
// IntOrString) are spelled, and in defaults, which kube prunes from v2.
type dialect int

const (
	swagger2 dialect = iota // OpenAPI 2.0, served at /openapi/v2
	openAPI3                // OpenAPI 3.0, served at /openapi/v3/...
)

func (d dialect) ref(model string) spec.Schema {
	prefix := "#/components/schemas/"
	if d == swagger2 {
		prefix = "#/definitions/"
	}
	return spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(prefix + model)}}
}

// Extension names, as kube-openapi's generator and the API server write them.
const (
	extGVK           = "x-kubernetes-group-version-kind"
	extAction        = "x-kubernetes-action"
	extPatchStrategy = "x-kubernetes-patch-strategy"
	extPatchMergeKey = "x-kubernetes-patch-merge-key"
	extListType      = "x-kubernetes-list-type"
	extListMapKeys   = "x-kubernetes-list-map-keys"
	extMapType       = "x-kubernetes-map-type"
)

// typeFacts is what reflection alone cannot tell about the Go types: the
// kinds a type is registered as, and the list and map semantics that the
// +listType/+listMapKey/+mapType/+structType markers declare in comments.
// The markers come from the structured-merge-diff schema that client-go
// compiles in for server-side apply, itself generated from kube's OpenAPI.
type typeFacts struct {
	gvks   map[reflect.Type][]schema.GroupVersionKind
	fields map[string]map[string]smdschema.StructField // model → field name → field
	atomic map[string]bool                             // models declared +structType=atomic
}

func newTypeFacts(types *runtime.Scheme) (*typeFacts, error) {
	f := &typeFacts{
		gvks:   map[reflect.Type][]schema.GroupVersionKind{},
		fields: map[string]map[string]smdschema.StructField{},
		atomic: map[string]bool{},
	}
	for gvk, t := range types.AllKnownTypes() {
		if gvk.Version != runtime.APIVersionInternal {
			f.gvks[t] = append(f.gvks[t], gvk)
		}
	}
	for _, list := range f.gvks {
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
	}

	// Any object typed by client-go's converter carries the whole schema.
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	tv, err := applyconfigurations.NewTypeConverter(scheme.Scheme).ObjectToTyped(cm)
	if err != nil {
		return nil, fmt.Errorf("load structured-merge-diff schema: %w", err)
	}
	for _, td := range tv.Schema().Types {
		if td.Map == nil {
			continue
		}
		if td.Map.ElementRelationship == smdschema.Atomic {
			f.atomic[td.Name] = true
		}
		fields := map[string]smdschema.StructField{}
		for _, sf := range td.Map.Fields {
			fields[sf.Name] = sf
		}
		f.fields[td.Name] = fields
	}
	return f, nil
}

// listAndMapExtensions returns the x-kubernetes-list-*/map-type extensions of
// one field. Atomic lists are left unmarked: that is the default, and kube's
// documents mark them only where a +listType=atomic marker says so, which the
// compiled-in schema cannot tell apart.
func (f *typeFacts) listAndMapExtensions(model, field string) spec.Extensions {
	sf, ok := f.fields[model][field]
	if !ok {
		return nil
	}
	ref := sf.Type
	ext := spec.Extensions{}
	switch {
	case ref.Inlined.List != nil && ref.Inlined.List.ElementRelationship == smdschema.Associative:
		if keys := ref.Inlined.List.Keys; len(keys) > 0 {
			ext[extListType] = "map"
			ext[extListMapKeys] = append([]string(nil), keys...)
		} else {
			ext[extListType] = "set"
		}
	case ref.Inlined.Map != nil && ref.Inlined.Map.ElementRelationship == smdschema.Atomic,
		ref.ElementRelationship != nil && *ref.ElementRelationship == smdschema.Atomic:
		ext[extMapType] = "atomic"
	}
	return ext
}

// markerDefault returns the default a +default marker declares for a field
// ("TCP" for ContainerPort.protocol), if it is a scalar; object defaults are
// the empty objects zeroDefault already gives.
func (f *typeFacts) markerDefault(model, field string) interface{} {
	switch d := f.fields[model][field].Default.(type) {
	case string, bool, int, int64, float64:
		return d
	}
	return nil
}

// walker turns Go types into OpenAPI schemas by reflection, following the
// rules of kube-openapi's openapi-gen: struct types become named models
// (io.k8s.api.apps.v1.Deployment) referenced by $ref, fields are named by
// their json tags, descriptions come from the generated SwaggerDoc methods,
// a field without omitempty is required, and types that describe themselves
// (OpenAPISchemaType, OpenAPIV3OneOfTypes: Quantity, IntOrString, Time) are
// spelled as they say. One walker collects the models of one document.
type walker struct {
	dialect dialect
	facts   *typeFacts
	models  map[string]*spec.Schema
}

func newWalker(d dialect, facts *typeFacts) *walker {
	return &walker{dialect: d, facts: facts, models: map[string]*spec.Schema{}}
}

// definitions returns the collected models, ready for a document.
func (w *walker) definitions() map[string]*spec.Schema {
	if w.dialect == swagger2 {
		return w.models
	}
	out := make(map[string]*spec.Schema, len(w.models))
	for name, s := range w.models {
		// OpenAPI 3.0 ignores siblings of $ref; kube wraps such refs in allOf.
		out[name] = builder3util.WrapRefs(s)
	}
	return out
}

var unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

type (
	modelNamer     interface{ OpenAPIModelName() string }
	swaggerDoc     interface{ SwaggerDoc() map[string]string }
	selfDescribing interface {
		OpenAPISchemaType() []string
		OpenAPISchemaFormat() string
	}
	oneOfTyped interface{ OpenAPIV3OneOfTypes() []string }
)

// schemaFor returns the schema of a value of type t where it is used: a
// reference for named structs, an inline schema for everything else.
func (w *walker) schemaFor(t reflect.Type) (spec.Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && t.Name() != "" {
		name, err := w.define(t)
		return w.dialect.ref(name), err
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return simple("string", "byte"), nil // base64
	}
	switch t.Kind() {
	case reflect.String:
		return simple("string", ""), nil
	case reflect.Bool:
		return simple("boolean", ""), nil
	case reflect.Int8, reflect.Uint8:
		return simple("integer", "byte"), nil
	case reflect.Int, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint16:
		return simple("integer", "int32"), nil
	case reflect.Int64, reflect.Uint32, reflect.Uint64:
		return simple("integer", "int64"), nil
	case reflect.Float32:
		return simple("number", "float"), nil
	case reflect.Float64:
		return simple("number", "double"), nil
	case reflect.Interface:
		return spec.Schema{}, nil
	case reflect.Slice, reflect.Array:
		items, err := w.element(t.Elem())
		if err != nil {
			return spec.Schema{}, err
		}
		s := simple("array", "")
		s.Items = &spec.SchemaOrArray{Schema: &items}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return spec.Schema{}, fmt.Errorf("map %v: only string keys can be described", t)
		}
		values, err := w.element(t.Elem())
		if err != nil {
			return spec.Schema{}, err
		}
		s := simple("object", "")
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &values}
		return s, nil
	}
	return spec.Schema{}, fmt.Errorf("type %v (%v) cannot be described", t, t.Kind())
}

// bodySchema is the schema of a request or response body: a reference to
// model when it is set, the schema of Go type t otherwise.
func (w *walker) bodySchema(t reflect.Type, model string) (spec.Schema, error) {
	if model != "" {
		return w.dialect.ref(model), nil
	}
	return w.schemaFor(t)
}

// element is the schema of a list item or map value, which kube defaults to
// the zero value of non-pointer types.
func (w *walker) element(t reflect.Type) (spec.Schema, error) {
	s, err := w.schemaFor(t)
	if err == nil && w.dialect == openAPI3 {
		s.Default = zeroDefault(t, false)
	}
	return s, err
}

// define adds the model of a named struct type and returns its name.
func (w *walker) define(t reflect.Type) (string, error) {
	name := modelName(t)
	if _, done := w.models[name]; done {
		return name, nil
	}
	model := &spec.Schema{}
	w.models[name] = model // before the fields, so recursive types terminate

	zero := reflect.New(t).Interface()
	if d, ok := zero.(swaggerDoc); ok {
		model.Description = d.SwaggerDoc()[""]
	}
	if typed, ok := zero.(selfDescribing); ok {
		model.Format = typed.OpenAPISchemaFormat()
		if oneOf, ok := zero.(oneOfTyped); ok && w.dialect == openAPI3 {
			for _, typ := range oneOf.OpenAPIV3OneOfTypes() {
				model.OneOf = append(model.OneOf, simple(typ, ""))
			}
		} else {
			model.Type = typed.OpenAPISchemaType()
		}
	} else {
		model.Type = []string{"object"}
		if err := w.addFields(model, t, name); err != nil {
			return "", fmt.Errorf("describe %v: %w", t, err)
		}
	}

	ext := spec.Extensions{}
	if w.facts.atomic[name] {
		ext[extMapType] = "atomic"
	}
	if gvks := w.facts.gvks[t]; len(gvks) > 0 {
		list := make([]interface{}, 0, len(gvks))
		for _, gvk := range gvks {
			list = append(list, gvkExtension(gvk))
		}
		ext[extGVK] = list
	}
	if len(ext) > 0 {
		model.Extensions = ext
	}
	return name, nil
}

// addFields adds the properties of struct t to model, flattening embedded
// (inline) structs as encoding/json does.
func (w *walker) addFields(model *spec.Schema, t reflect.Type, modelName string) error {
	var docs map[string]string
	if d, ok := reflect.New(t).Interface().(swaggerDoc); ok {
		docs = d.SwaggerDoc()
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := jsonTagOf(f)
		if tag.name == "-" {
			continue
		}
		if f.Anonymous && tag.name == "" {
			if et := derefType(f.Type); et.Kind() == reflect.Struct {
				if err := w.addFields(model, et, modelName); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name := tag.name
		if name == "" {
			name = f.Name
		}

		var prop spec.Schema
		if tag.asString {
			prop = simple("string", "")
		} else {
			var err error
			if prop, err = w.schemaFor(f.Type); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		prop.Description = docs[name]
		if w.dialect == openAPI3 {
			prop.Default = zeroDefault(f.Type, tag.omitEmpty)
			if d := w.facts.markerDefault(modelName, name); d != nil {
				prop.Default = d
			}
		}
		ext := w.facts.listAndMapExtensions(modelName, name)
		if s := f.Tag.Get("patchStrategy"); s != "" {
			ext = withExtension(ext, extPatchStrategy, s)
		}
		if k := f.Tag.Get("patchMergeKey"); k != "" {
			ext = withExtension(ext, extPatchMergeKey, k)
		}
		if len(ext) > 0 {
			prop.Extensions = ext
		}

		if model.Properties == nil {
			model.Properties = map[string]spec.Schema{}
		}
		model.Properties[name] = prop
		if !tag.omitEmpty {
			model.Required = append(model.Required, name)
		}
	}
	return nil
}

// modelName names a type as kube's documents do: by the name it declares
// (k8s.io/api types carry a generated OpenAPIModelName), or by its package
// path with the domain reversed (io.k8s.api.apps.v1.Deployment).
func modelName(t reflect.Type) string {
	if n, ok := reflect.New(t).Interface().(modelNamer); ok {
		return n.OpenAPIModelName()
	}
	return util.ToRESTFriendlyName(t.PkgPath() + "." + t.Name())
}

// zeroDefault is the default kube's generator enforces: the zero value of
// non-pointer fields that are required (no omitempty), and an empty object
// for non-pointer structs, except those that decode themselves (Time,
// Quantity, IntOrString), whose zero value is null.
func zeroDefault(t reflect.Type, omitEmpty bool) interface{} {
	switch t.Kind() {
	case reflect.Struct:
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			return nil
		}
		if t.NumField() == 1 && t.Field(0).Anonymous {
			return zeroDefault(t.Field(0).Type, omitEmpty)
		}
		return map[string]interface{}{}
	case reflect.String:
		if !omitEmpty {
			return ""
		}
	case reflect.Bool:
		if !omitEmpty {
			return false
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if !omitEmpty {
			return 0
		}
	}
	return nil
}

type jsonTag struct {
	name      string
	omitEmpty bool // omitempty or omitzero: the field may be absent
	asString  bool // ",string": a number or bool encoded as a string
}

func jsonTagOf(f reflect.StructField) jsonTag {
	parts := strings.Split(f.Tag.Get("json"), ",")
	tag := jsonTag{name: parts[0]}
	for _, opt := range parts[1:] {
		switch opt {
		case "omitempty", "omitzero":
			tag.omitEmpty = true
		case "string":
			tag.asString = true
		}
	}
	return tag
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func simple(typ, format string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{typ}, Format: format}}
}

func withExtension(ext spec.Extensions, key string, value interface{}) spec.Extensions {
	if ext == nil {
		ext = spec.Extensions{}
	}
	ext[key] = value
	return ext
}

func gvkExtension(gvk schema.GroupVersionKind) map[string]interface{} {
	return map[string]interface{}{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
}
