package registry

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	celcommon "k8s.io/apiserver/pkg/cel/common"
	"k8s.io/client-go/util/jsonpath"

	"minik/internal/tables"
)

// CustomResource is what serving one version of a custom resource needs
// beyond its descriptor: the structural schema that prunes and defaults
// its objects, and the scale subresource's paths.
type CustomResource struct {
	// Resource is the descriptor, served like any built-in one.
	Resource *Resource
	// CRD is the definition the descriptor was built from.
	CRD *apiextensionsv1.CustomResourceDefinition
	// Structural is the version's structural schema; nil when it has none.
	Structural *structuralschema.Structural
	// Scale is the version's scale subresource; nil when it has none.
	Scale *apiextensionsv1.CustomResourceSubresourceScale
	// Columns are the version's printer columns.
	Columns []apiextensionsv1.CustomResourceColumnDefinition
	// Storage is the version objects are stored at.
	Storage string
	// ListKind is the kind of the resource's lists.
	ListKind string
}

// Serves tells whether the definition serves version v of the group.
func (cr *CustomResource) Serves(v string) bool {
	return apihelpers.HasServedCRDVersion(cr.CRD, v)
}

// Definition is what one object of a defining kind (a
// CustomResourceDefinition) asks the API server to serve.
type Definition struct {
	// Name is the defining object's name.
	Name string
	// Serve routes the defined resources; Discover also lists them in
	// discovery and OpenAPI.
	Serve, Discover bool
	// Terminating refuses creates of the defined resources.
	Terminating bool
	// Resources are the defined resources, one per served version.
	Resources []*CustomResource
	// Identity is what the served handlers are built from: a later
	// definition of the same name with a semantically equal Identity keeps
	// them, and their open watches.
	Identity any
	// NewConverter returns the converter between the definition's
	// versions (nil to relabel apiVersion only), from kube's factory.
	NewConverter func(f *conversion.CRConverterFactory) (runtime.ObjectConvertor, error)
}

// crdIdentity is what a CustomResourceDefinition's served handlers are
// built from (exported fields: the API layer compares it semantically).
type crdIdentity struct {
	Spec        apiextensionsv1.CustomResourceDefinitionSpec
	Names       apiextensionsv1.CustomResourceDefinitionNames
	Established bool
}

// crdDefinition is what a CustomResourceDefinition defines, as kube's
// apiextensions-apiserver serves it: its served versions once its names
// are accepted, listed once it is Established.
func crdDefinition(obj runtime.Object) (*Definition, error) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("not a CustomResourceDefinition: %T", obj)
	}
	established := apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
	d := &Definition{
		Name:        crd.Name,
		Serve:       established || apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted),
		Discover:    established,
		Terminating: apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating),
		Identity:    crdIdentity{Spec: crd.Spec, Names: crd.Status.AcceptedNames, Established: established},
		NewConverter: func(f *conversion.CRConverterFactory) (runtime.ObjectConvertor, error) {
			if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter {
				return nil, nil
			}
			safe, _, err := f.NewConverter(crd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", crd.Name, err)
			}
			return safe, nil
		},
	}
	if !d.Serve {
		return d, nil
	}
	var err error
	if d.Resources, err = CustomResources(crd); err != nil {
		return nil, err
	}
	return d, nil
}

// CustomResources returns the served versions of a CustomResourceDefinition
// as descriptors, named after its accepted names (its spec names until
// they are accepted), in the CRD's version order.
func CustomResources(crd *apiextensionsv1.CustomResourceDefinition) ([]*CustomResource, error) {
	names := crd.Status.AcceptedNames
	if names.Kind == "" {
		names = crd.Spec.Names
	}
	storage, err := apihelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return nil, err
	}
	var out []*CustomResource
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		cr := &CustomResource{CRD: crd, Storage: storage, ListKind: names.ListKind}
		if cr.ListKind == "" {
			cr.ListKind = names.Kind + "List"
		}
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		res := &Resource{
			GroupVersion: gv, Name: crd.Spec.Names.Plural, SingularName: names.Singular, Kind: names.Kind,
			Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
			ShortNames: names.ShortNames, Categories: names.Categories,
		}
		if v.Subresources != nil {
			res.HasStatus = v.Subresources.Status != nil
			if v.Subresources.Scale != nil {
				res.HasScale = true
				cr.Scale = v.Subresources.Scale
			}
		}
		var internal *apiextensions.JSONSchemaProps
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			internal = &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return nil, fmt.Errorf("%s: schema of %s: %w", crd.Name, v.Name, err)
			}
			if cr.Structural, err = structuralschema.NewStructural(internal); err != nil {
				return nil, fmt.Errorf("%s: structural schema of %s: %w", crd.Name, v.Name, err)
			}
		}
		cr.Columns = v.AdditionalPrinterColumns
		if len(cr.Columns) == 0 {
			cr.Columns = []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Age", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"},
			}
		}
		res.Strategy, err = customResourceStrategy(res, cr, internal)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", crd.Name, err)
		}
		if res.Strategy.Fields, err = selectableFields(v.SelectableFields); err != nil {
			return nil, fmt.Errorf("%s: selectable fields of %s: %w", crd.Name, v.Name, err)
		}
		cr.Resource = res
		out = append(out, cr)
	}
	return out, nil
}

// Prune drops the fields of obj its schema does not declare (unless it
// preserves unknown fields there) and the malformed metadata fields, as
// kube does on decoding a custom resource. It returns the paths dropped
// ("spec.foo"), which fieldValidation reports.
func (cr *CustomResource) Prune(obj map[string]interface{}) []string {
	if cr.Structural == nil {
		return nil
	}
	pruned := pruning.PruneWithOptions(obj, cr.Structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	_, unknown := schemaobjectmeta.CoerceWithOptions(nil, obj, cr.Structural, true, schemaobjectmeta.CoerceOptions{DropInvalidFields: true, ReturnUnknownFieldPaths: true})
	return append(pruned, unknown...)
}

// customResourceStrategy is kube's custom resource strategy: objects are
// pruned and defaulted from the schema; validation checks apiVersion and
// kind, the metadata (names are DNS subdomains), the schema, embedded
// objects, list types, the scale paths and the x-kubernetes-validations
// CEL rules (with oldSelf on update, and kube's ratcheting: a value left
// as it was is not judged again); the table shows the printer columns.
func customResourceStrategy(res *Resource, cr *CustomResource, internal *apiextensions.JSONSchemaProps) (Strategy, error) {
	gvk, namespaced := res.GroupVersionKind(), res.Namespaced
	var validator apiservervalidation.SchemaValidator
	if internal != nil {
		v, _, err := apiservervalidation.NewSchemaValidator(internal)
		if err != nil {
			return Strategy{}, fmt.Errorf("schema validator of %s: %w", gvk.Version, err)
		}
		validator = v
	}
	var rules *cel.Validator
	if cr.Structural != nil {
		// The rules are compiled once here, with kube's per-call cost limit.
		rules = cel.NewValidator(cr.Structural, true, celconfig.PerCallLimit)
	}
	table, err := tables.PrinterColumns(cr.Columns)
	if err != nil {
		return Strategy{}, err
	}
	typeMeta := func(u *unstructured.Unstructured) field.ErrorList {
		var errs field.ErrorList
		if u.GetKind() != gvk.Kind {
			errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", gvk.Kind)))
		}
		if u.GetAPIVersion() != gvk.GroupVersion().String() {
			errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("must be %v", gvk.GroupVersion().String())))
		}
		return errs
	}
	s := Strategy{
		Default: func(obj runtime.Object) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return
			}
			if u.GetKind() == "" {
				u.SetGroupVersionKind(gvk)
			}
			if cr.Structural != nil {
				cr.Prune(u.Object)
				structuraldefaulting.Default(u.Object, cr.Structural)
			}
		},
		Validate: func(ctx context.Context, obj runtime.Object) field.ErrorList {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return wrongType[*unstructured.Unstructured](obj)
			}
			if errs := typeMeta(u); len(errs) > 0 {
				return errs
			}
			errs := apivalidation.ValidateObjectMetaAccessor(u, namespaced, apivalidation.NameIsDNSSubdomain, metadataPath)
			if validator != nil {
				errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.UnstructuredContent(), validator)...)
			}
			errs = append(errs, validateScale(u, cr.Scale)...)
			if cr.Structural != nil {
				errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, cr.Structural, false)...)
				errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, cr.Structural, u.Object)...)
			}
			return append(errs, validateRules(ctx, rules, cr.Structural, errs, u.Object, nil)...)
		},
		ValidateUpdate: func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return wrongType[*unstructured.Unstructured](obj)
			}
			o, ok := old.(*unstructured.Unstructured)
			if !ok {
				return wrongType[*unstructured.Unstructured](old)
			}
			if errs := typeMeta(u); len(errs) > 0 {
				return errs
			}
			errs := apivalidation.ValidateObjectMetaAccessor(u, namespaced, apivalidation.NameIsDNSSubdomain, metadataPath)
			errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(u, o, metadataPath)...)
			var correlated *celcommon.CorrelatedObject
			if cr.Structural != nil {
				correlated = celcommon.NewCorrelatedObject(u.Object, o.Object, &model.Structural{Structural: cr.Structural})
			}
			if validator != nil {
				errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, u.UnstructuredContent(), o.UnstructuredContent(), validator, apiservervalidation.WithRatcheting(correlated))...)
			}
			errs = append(errs, validateScale(u, cr.Scale)...)
			if cr.Structural != nil {
				errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, cr.Structural, false)...)
				// List types ratchet: an object already wrong may stay so.
				if len(structurallisttype.ValidateListSetsAndMaps(nil, cr.Structural, o.Object)) == 0 {
					errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, cr.Structural, u.Object)...)
				}
			}
			return append(errs, validateRules(ctx, rules, cr.Structural, errs, u.Object, o.Object, cel.WithRatcheting(correlated))...)
		},
		Table: table.Convertor(nil),
	}
	if !namespaced {
		s.PrepareForCreate = clearingNamespace(nil)
		s.PrepareForUpdate = clearingNamespaceOnUpdate(nil)
	}
	return s, nil
}

// selectableFields returns the field-selector fields a version's
// selectableFields declare, as kube computes them: named by the JSON path
// without its leading dot, valued by what the path finds printed as Go
// prints it ("" when it finds nothing). Nil when none are declared.
func selectableFields(declared []apiextensionsv1.SelectableField) (func(runtime.Object) fields.Set, error) {
	if len(declared) == 0 {
		return nil, nil
	}
	type selectable struct {
		name string
		path *jsonpath.JSONPath
	}
	var all []selectable
	for _, sf := range declared {
		p := jsonpath.New("selectableField")
		p.AllowMissingKeys(true)
		if err := p.Parse("{" + sf.JSONPath + "}"); err != nil {
			return nil, fmt.Errorf("jsonPath %q: %w", sf.JSONPath, err)
		}
		all = append(all, selectable{name: strings.TrimPrefix(sf.JSONPath, "."), path: p})
	}
	return func(obj runtime.Object) fields.Set {
		set := fields.Set{}
		u, ok := obj.(*unstructured.Unstructured)
		for _, sf := range all {
			set[sf.name] = ""
			if !ok {
				continue
			}
			results, err := sf.path.FindResults(u.Object)
			if err != nil || len(results) != 1 || len(results[0]) != 1 {
				continue
			}
			if v := results[0][0].Interface(); v != nil {
				set[sf.name] = fmt.Sprint(v)
			}
		}
		return set
	}, nil
}

// validateRules runs the x-kubernetes-validations rules within kube's
// runtime cost budget, unless the schema errors so far block them (a
// missing, mistyped, unsupported or too long value): then, as kube, one
// error says that the rules were not checked.
func validateRules(ctx context.Context, rules *cel.Validator, s *structuralschema.Structural, errs field.ErrorList, obj, old map[string]interface{}, opts ...cel.Option) field.ErrorList {
	if rules == nil {
		return nil
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	var oldObj interface{}
	if old != nil {
		oldObj = old
	}
	out, _ := rules.Validate(ctx, nil, s, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return out
}

// validateScale checks the replicas the scale subresource reads, as
// kube's custom resource validator does.
func validateScale(u *unstructured.Unstructured, scale *apiextensionsv1.CustomResourceSubresourceScale) field.ErrorList {
	if scale == nil {
		return nil
	}
	var errs field.ErrorList
	check := func(p string) {
		if p == "" {
			return
		}
		fld := jsonPathToFieldPath(p)
		v, found, err := unstructured.NestedFieldNoCopy(u.Object, fieldPathSegments(p)...)
		if err != nil || !found {
			return
		}
		n, ok := v.(int64)
		switch {
		case !ok:
			// The schema's type check reports it.
		case n < 0:
			errs = append(errs, field.Invalid(fld, n, "should be a non-negative integer"))
		case n > 2147483647:
			errs = append(errs, field.Invalid(fld, n, "should be less than or equal to 2147483647"))
		}
	}
	check(scale.SpecReplicasPath)
	if _, ok := u.Object["status"]; ok {
		check(scale.StatusReplicasPath)
	}
	return errs
}

// fieldPathSegments splits a simple JSONPath (".spec.replicas") into its
// fields.
func fieldPathSegments(p string) []string {
	var out []string
	for _, s := range bytes.Split([]byte(p), []byte(".")) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}

// FieldPathSegments is fieldPathSegments for the API server.
func FieldPathSegments(p string) []string { return fieldPathSegments(p) }

func jsonPathToFieldPath(p string) *field.Path {
	segs := fieldPathSegments(p)
	if len(segs) == 0 {
		return field.NewPath("")
	}
	return field.NewPath(segs[0], segs[1:]...)
}
