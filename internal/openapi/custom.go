package openapi

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	openapiv2conv "k8s.io/apiextensions-apiserver/pkg/controller/openapi/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"minik/internal/registry"
)

// Custom resources are described as kube's apiextensions-apiserver
// describes them (its controller/openapi/builder): for each served version,
// the kind's model is the version's openAPIV3Schema with kube's metadata,
// apiVersion and kind properties added, beside a model of its list kind;
// the paths are those of the verbs the resource serves (no deprecated
// watch paths), taking JSON and YAML. Each group version gets its own v3
// document, titled as kube titles them; the v2 document takes their paths
// and models beside the built-in ones, which win any conflict.

// crdInfo is what kube's documents of custom resources declare about
// themselves.
var crdInfo = &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"}}

// Extensions kube adds to custom resource models.
const (
	extSelectableFields = "x-kubernetes-selectable-fields"
	extEmbeddedResource = "x-kubernetes-embedded-resource"
	extPreserveUnknown  = "x-kubernetes-preserve-unknown-fields"
)

var (
	objectMetaType = reflect.TypeOf(metav1.ObjectMeta{})
	listMetaType   = reflect.TypeOf(metav1.ListMeta{})

	crMediaTypes    = []string{"application/json", "application/yaml"}
	crPatchTypes    = []string{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}
	typeMetaDocs    = metav1.TypeMeta{}.SwaggerDoc()
	objectMetaDoc   = metav1beta1.PartialObjectMetadata{}.SwaggerDoc()["metadata"]
	listMetaDoc     = metav1beta1.PartialObjectMetadataList{}.SwaggerDoc()["metadata"]
	embeddedAPIDoc  = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	embeddedKindDoc = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// customSections groups custom resources into one section per group
// version, by name. Each section lists the custom resources whose models
// it defines.
func customSections(crs []*registry.CustomResource) []section {
	byName := map[string]*section{}
	var names []string
	for _, cr := range crs {
		prefix, _, _ := gvNames(cr.Resource.GroupVersion)
		name := strings.TrimPrefix(prefix, "/")
		sec := byName[name]
		if sec == nil {
			sec = &section{name: name}
			byName[name] = sec
			names = append(names, name)
		}
		sec.routes = append(sec.routes, customResourceRoutes(cr)...)
		sec.custom = append(sec.custom, cr)
	}
	sort.Strings(names)
	out := make([]section, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}

// crNames are the names a custom resource's models and paths use.
type crNames struct {
	gv                     schema.GroupVersion
	kind, listKind, plural string
}

func namesOf(cr *registry.CustomResource) crNames {
	listKind := cr.CRD.Status.AcceptedNames.ListKind
	if cr.CRD.Status.AcceptedNames.Kind == "" {
		listKind = cr.CRD.Spec.Names.ListKind
	}
	if listKind == "" {
		listKind = cr.Resource.Kind + "List"
	}
	return crNames{gv: cr.Resource.GroupVersion, kind: cr.Resource.Kind, listKind: listKind, plural: cr.Resource.Name}
}

// crModelName names a custom resource's model as kube does: the group
// reversed, the version and the kind ("test.minik.stable.v1.CronTab").
func crModelName(gv schema.GroupVersion, kind string) string {
	parts := strings.Split(gv.Group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + gv.Version + "." + kind
}

// customResourceRoutes describes the verbs kube serves for a custom
// resource: list (also across namespaces), create and deletecollection on
// the collection; read, replace, delete and patch on an item; read,
// replace and patch of the status and scale subresources it has.
func customResourceRoutes(cr *registry.CustomResource) []route {
	r := cr.Resource
	n := namesOf(cr)
	d := newResourceDoc(r)
	gvk := r.GroupVersionKind()
	kindModel, listModel := crModelName(n.gv, n.kind), crModelName(n.gv, n.listKind)
	collection := d.prefix + d.nsPath + "/" + r.Name
	item := collection + "/{name}"
	itemParams := d.itemParams(n.kind)
	listOpts := optionParams(metav1.ListOptions{})

	op := func(method, id, doc, action string, params ...[]param) operation {
		o := d.op(method, id, doc, action, gvk, params...)
		o.consumes, o.produces = crMediaTypes, crMediaTypes
		return o
	}
	list := func(id string, params []param) operation {
		o := op("get", id, "list objects of kind "+n.kind, "list", params, listOpts)
		o.responses = []response{{code: 200, doc: "OK", model: listModel}, unauthorized}
		return o
	}
	kindResponse := func(code int, doc string) response { return response{code: code, doc: doc, model: kindModel} }

	create := op("post", d.id("create", "", "", r.Namespaced), "create"+nounArticle(n.kind)+n.kind, "post", d.nsParams, optionParams(metav1.CreateOptions{}))
	create.bodyModel, create.bodyRequired = kindModel, true
	create.responses = []response{kindResponse(200, "OK"), kindResponse(201, "Created"), kindResponse(202, "Accepted"), unauthorized}

	deleteCollection := op("delete", d.id("deletecollection", "", "", r.Namespaced), "delete collection of "+n.kind, "deletecollection", d.nsParams, listOpts)
	deleteCollection.responses = []response{ok(statusType), unauthorized}

	del := op("delete", d.id("delete", "", "", r.Namespaced), "delete"+nounArticle(n.kind)+n.kind, "delete", itemParams, optionParams(metav1.DeleteOptions{}))
	del.body = deleteOptsType
	del.responses = []response{ok(statusType), accepted(statusType), unauthorized}

	// readWrite returns get, put and patch of an item or a subresource.
	readWrite := func(sub string, t reflect.Type, model string) []operation {
		what := "the specified " + n.kind
		if sub != "" {
			what = sub + " of the specified " + n.kind
		}
		body := func(code int, doc string) response { return response{code: code, doc: doc, typ: t, model: model} }
		get := op("get", d.id("read", sub, "", r.Namespaced), "read "+what, "get", itemParams, optionParams(metav1.GetOptions{}))
		get.responses = []response{body(200, "OK"), unauthorized}
		put := op("put", d.id("replace", sub, "", r.Namespaced), "replace "+what, "put", itemParams, optionParams(metav1.UpdateOptions{}))
		put.body, put.bodyModel, put.bodyRequired = t, model, true
		put.responses = []response{body(200, "OK"), body(201, "Created"), unauthorized}
		patch := op("patch", d.id("patch", sub, "", r.Namespaced), "partially update "+what, "patch", itemParams, optionParams(metav1.PatchOptions{}))
		patch.body, patch.bodyRequired, patch.consumes = patchType, true, crPatchTypes
		patch.responses = []response{body(200, "OK"), unauthorized}
		return []operation{get, put, patch}
	}

	var routes []route
	if r.Namespaced {
		routes = append(routes, route{path: d.prefix + "/" + r.Name, ops: []operation{list(d.id("list", "", "ForAllNamespaces", false), nil)}})
	}
	routes = append(routes,
		route{path: collection, ops: []operation{list(d.id("list", "", "", r.Namespaced), d.nsParams), create, deleteCollection}},
		route{path: item, ops: append(readWrite("", nil, kindModel), del)},
	)
	if r.HasStatus {
		routes = append(routes, route{path: item + "/status", ops: readWrite("status", nil, kindModel)})
	}
	if r.HasScale {
		routes = append(routes, route{path: item + "/scale", ops: readWrite("scale", scaleType, "")})
	}
	for i := range routes {
		routes[i].hoistCommonParams()
	}
	return routes
}

// nounArticle is kube's article for a kind in descriptions (its
// endpoints.GetArticleForNoun): none for a plural, " an " before a vowel,
// " a " otherwise.
func nounArticle(kind string) string {
	if !strings.HasSuffix(kind, "ss") && strings.HasSuffix(kind, "s") {
		return " "
	}
	return article(kind)
}

// defineCustomResource adds the models of a custom resource version to the
// walker: its kind and its list kind, and the metadata models they refer to.
func (w *walker) defineCustomResource(cr *registry.CustomResource) error {
	n := namesOf(cr)
	objectMeta, err := w.schemaFor(objectMetaType)
	if err != nil {
		return err
	}
	listMeta, err := w.schemaFor(listMetaType)
	if err != nil {
		return err
	}
	objectMeta.Description, listMeta.Description = objectMetaDoc, listMetaDoc

	kind, err := w.customKindModel(cr, objectMeta)
	if err != nil {
		return fmt.Errorf("custom resource %s: %w", cr.Resource.GroupResource(), err)
	}
	kind.AddExtension(extGVK, []interface{}{gvkExtension(n.gv.WithKind(n.kind))})

	items := w.dialect.ref(crModelName(n.gv, n.kind))
	list := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type:        []string{"object"},
		Description: n.listKind + " is a list of " + n.kind,
		Required:    []string{"items"},
		Properties: map[string]spec.Schema{
			"items": {SchemaProps: spec.SchemaProps{
				Type:        []string{"array"},
				Description: "List of " + n.plural + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				Items:       &spec.SchemaOrArray{Schema: &items},
			}},
			"metadata": listMeta,
		},
	}}
	addTypeMetaProperties(list)
	list.AddExtension(extGVK, []interface{}{gvkExtension(n.gv.WithKind(n.listKind))})

	if fields := selectableFields(cr.CRD, n.gv.Version); fields != nil {
		kind.AddExtension(extSelectableFields, fields)
		list.AddExtension(extSelectableFields, fields)
	}
	if w.dialect == swagger2 {
		// kube prunes defaults from the v2 document, built-in or custom.
		kind = pruneDefaults(kind)
	}
	w.models[crModelName(n.gv, n.kind)] = kind
	w.models[crModelName(n.gv, n.listKind)] = list
	return nil
}

// customKindModel is the model of a custom resource's kind, before its
// extensions. Without a structural schema it is any object; in v2, which
// kubectl reads as closed, so is a kind that keeps unknown fields.
func (w *walker) customKindModel(cr *registry.CustomResource, objectMeta spec.Schema) (*spec.Schema, error) {
	ss, err := structuralSchema(cr.CRD, cr.Resource.GroupVersion.Version)
	if err != nil {
		return nil, err
	}
	anyObject := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	if ss == nil || (w.dialect == swagger2 && (ss.XPreserveUnknownFields || cr.CRD.Spec.PreserveUnknownFields)) {
		return anyObject, nil
	}
	if w.dialect == swagger2 {
		ss = openapiv2conv.ToStructuralOpenAPIV2(ss)
	}
	s := ss.ToKubeOpenAPI()
	s.SetProperty("metadata", objectMeta)
	addTypeMetaProperties(s)
	w.addEmbeddedProperties(s, objectMeta)
	return s, nil
}

// structuralSchema is the unfolded structural schema of a version of a
// definition, or nil when it has none or it is not structural.
func structuralSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) (*structuralschema.Structural, error) {
	v, err := apihelpers.GetSchemaForVersion(crd, version)
	if err != nil || v == nil || v.OpenAPIV3Schema == nil {
		return nil, err
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("convert schema of %s: %w", version, err)
	}
	if validation.SchemaHasInvalidTypes(internal) {
		return nil, nil
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil || len(structuralschema.ValidateStructural(nil, ss)) > 0 {
		return nil, nil // kube describes such a version as any object
	}
	return ss.Unfold(), nil
}

// addTypeMetaProperties adds apiVersion and kind as TypeMeta describes them.
func addTypeMetaProperties(s *spec.Schema) {
	for _, name := range []string{"apiVersion", "kind"} {
		p := simple("string", "")
		p.Description = typeMetaDocs[name]
		s.SetProperty(name, p)
	}
}

// addEmbeddedProperties gives every embedded resource in s (a field marked
// x-kubernetes-embedded-resource) the apiVersion, kind and metadata
// properties, the first two required. In v2 a field that keeps unknown
// fields is left alone: kubectl would refuse what the properties omit.
func (w *walker) addEmbeddedProperties(s *spec.Schema, objectMeta spec.Schema) {
	if s == nil {
		return
	}
	for k, v := range s.Properties {
		w.addEmbeddedProperties(&v, objectMeta)
		s.Properties[k] = v
	}
	if s.Items != nil {
		w.addEmbeddedProperties(s.Items.Schema, objectMeta)
	}
	if s.AdditionalProperties != nil {
		w.addEmbeddedProperties(s.AdditionalProperties.Schema, objectMeta)
	}
	if preserve, _ := s.Extensions.GetBool(extPreserveUnknown); preserve && w.dialect == swagger2 {
		return
	}
	if embedded, _ := s.Extensions.GetBool(extEmbeddedResource); !embedded {
		return
	}
	for name, doc := range map[string]string{"apiVersion": embeddedAPIDoc, "kind": embeddedKindDoc} {
		p := simple("string", "")
		p.Description = doc
		s.SetProperty(name, p)
	}
	s.SetProperty("metadata", objectMeta)
	for _, name := range []string{"kind", "apiVersion"} {
		if !slices.Contains(s.Required, name) {
			s.Required = append(s.Required, name)
		}
	}
}

// selectableFields is the x-kubernetes-selectable-fields extension of a
// version: the field paths it may be selected by, or nil.
func selectableFields(crd *apiextensionsv1.CustomResourceDefinition, version string) []interface{} {
	for _, v := range crd.Spec.Versions {
		if v.Name != version || len(v.SelectableFields) == 0 {
			continue
		}
		out := make([]interface{}, 0, len(v.SelectableFields))
		for _, f := range v.SelectableFields {
			out = append(out, map[string]interface{}{"fieldPath": strings.TrimPrefix(f.JSONPath, ".")})
		}
		return out
	}
	return nil
}

// pruneDefaults returns s without its defaults, at any depth.
func pruneDefaults(s *spec.Schema) *spec.Schema {
	w := schemamutation.Walker{
		SchemaCallback: func(s *spec.Schema) *spec.Schema {
			if s.Default == nil {
				return s
			}
			c := *s
			c.Default = nil
			return &c
		},
		RefCallback: schemamutation.RefCallbackNoop,
	}
	return w.WalkSchema(s)
}
