package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Field management follows kube-apiserver: every create, update and patch
// records in metadata.managedFields which manager set which fields (an
// Update entry named after the request's fieldManager, or after its
// user agent), and server-side apply merges an applied configuration
// into the live object, failing with a 409 when it would take fields
// another manager owns, unless forced.

// serverManager is the field manager of the API server's own writes (the
// kubernetes Service and its EndpointSlice), as kube-apiserver's client
// names itself.
const serverManager = "kube-apiserver"

// schemaTypeConverter converts the built-in kinds to structured values
// with client-go's embedded schema; it is built on first use (parsing the
// schema takes a while) and shared.
var schemaTypeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(Scheme)
})

// prewarmFieldManagement parses the field managers' schema in the
// background once the server is ready, so that the first tracked write
// rarely waits for the parse (one that comes sooner waits for the same one).
func prewarmFieldManagement() {
	go schemaTypeConverter()
}

// writeInfo is what field management needs to know about a write request.
type writeInfo struct {
	// manager is the request's field manager.
	manager string
	// subresource is the request's subresource, "" for the main resource.
	subresource string
	// applied is set once an apply computed the object's managedFields,
	// so the write does not record an Update on top.
	applied bool
}

type writeInfoKey struct{}

// withWriteInfo returns ctx carrying wi.
func withWriteInfo(ctx context.Context, wi writeInfo) context.Context {
	return context.WithValue(ctx, writeInfoKey{}, wi)
}

// writeInfoFrom returns the write information of ctx; writes the server
// makes itself have none and are recorded under serverManager.
func writeInfoFrom(ctx context.Context) (writeInfo, bool) {
	wi, ok := ctx.Value(writeInfoKey{}).(writeInfo)
	return wi, ok
}

// managerOrUserAgent is kube's default field manager: the fieldManager
// parameter, else the user agent up to its first slash, printable
// characters only, within the length limit.
func managerOrUserAgent(manager, userAgent string) string {
	if manager != "" {
		return manager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var buf bytes.Buffer
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if buf.Len()+utf8.RuneLen(r) > validation.FieldManagerMaxLength {
			break
		}
		buf.WriteRune(r)
	}
	return buf.String()
}

// fieldManagers holds a resource's field managers, one per subresource
// written through, built on first use.
type fieldManagers struct {
	mu  sync.Mutex
	fms map[string]*managedfields.FieldManager
}

// fieldManager returns the field manager of the resource's subresource
// sub ("" for the main resource), or nil when writes through sub leave
// managedFields alone (pods/binding, as kube's binding does).
func (h *objectStore) fieldManager(sub string) (*managedfields.FieldManager, error) {
	if sub == "binding" {
		return nil, nil
	}
	h.fms.mu.Lock()
	defer h.fms.mu.Unlock()
	if fm, ok := h.fms.fms[sub]; ok {
		return fm, nil
	}
	gvk := h.res.GroupVersionKind()
	gv := fieldpath.APIVersion(gvk.GroupVersion().String())
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	switch {
	case sub == "status":
		// Only the status (and, for some kinds, annotations) changes
		// through /status: an applier there owns nothing else.
		matchers := []*fieldpath.SetMatcher{fieldpath.MakePrefixMatcherOrDie("status")}
		if h.res.Strategy.StatusUpdatesAnnotations {
			matchers = append(matchers, fieldpath.MakePrefixMatcherOrDie("metadata", "annotations"))
		}
		reset = map[fieldpath.APIVersion]fieldpath.Filter{gv: fieldpath.NewIncludeMatcherFilter(matchers...)}
	case sub == "" && h.res.HasStatus:
		// The main resource's writes keep the stored status.
		reset = map[fieldpath.APIVersion]fieldpath.Filter{gv: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status")))}
	}
	var fm *managedfields.FieldManager
	var err error
	if h.custom != nil {
		// Custom resources are unstructured; kinds without a schema in
		// client-go get the deduced converter, as kube's do without one.
		fm, err = managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(), customConvertor{},
			strategyDefaulter(h.res.Strategy.Default), customCreater{gvk}, gvk, gvk.GroupVersion(), sub, reset)
	} else {
		fm, err = managedfields.NewDefaultFieldManager(h.typeConverter(), runtime.UnsafeObjectConvertor(Scheme),
			strategyDefaulter(h.res.Strategy.Default), Scheme, gvk, gvk.GroupVersion(), sub, reset)
	}
	if err != nil {
		return nil, fmt.Errorf("field manager of %s: %w", h.res.GroupResource(), err)
	}
	if h.fms.fms == nil {
		h.fms.fms = map[string]*managedfields.FieldManager{}
	}
	h.fms.fms[sub] = fm
	return fm, nil
}

// typeConverter returns client-go's schema converter when it knows the
// resource's kind, and otherwise (a kind client-go has no schema for) a
// deduced one, which treats every field as atomic, as kube does for CRDs
// without a schema.
func (h *objectStore) typeConverter() managedfields.TypeConverter {
	tc := schemaTypeConverter()
	probe := h.codec.New()
	probe.GetObjectKind().SetGroupVersionKind(h.res.GroupVersionKind())
	if _, err := tc.ObjectToTyped(probe); err != nil {
		return managedfields.NewDeducedTypeConverter()
	}
	return tc
}

// strategyDefaulter defaults applied objects with the kind's strategy, as
// kube's generated defaulters do.
type strategyDefaulter func(runtime.Object)

func (d strategyDefaulter) Default(obj runtime.Object) {
	if d != nil {
		d(obj)
	}
}

// manageFields records the write of obj over live (nil for a create) in
// obj's managedFields: an Update entry of the request's manager, as
// kube-apiserver's handlers do before admission. An apply has computed
// the entries already (applied, set on obj); writes through a subresource
// without field management keep the live object's entries, and so do the
// server's own writes before it is ready (its bootstrap policy and
// defaults): the schema parse they would wait for costs about 70 ms of a
// start-up that aims at 0.2 s. It returns the object to go on with.
func (h *objectStore) manageFields(ctx context.Context, live, obj runtime.Object, sub string, applied []metav1.ManagedFieldsEntry) runtime.Object {
	wi, ok := writeInfoFrom(ctx)
	if !ok {
		wi = writeInfo{manager: serverManager, subresource: sub}
	}
	if wi.applied {
		m, _ := meta.Accessor(obj)
		m.SetManagedFields(applied)
		return obj
	}
	if wi.subresource != "" {
		sub = wi.subresource
	}
	var fm *managedfields.FieldManager
	var err error
	if h.s.ready.Load() {
		fm, err = h.fieldManager(sub)
	}
	if err != nil || fm == nil {
		m, _ := meta.Accessor(obj)
		if live == nil {
			m.SetManagedFields(nil)
		} else if lm, err := meta.Accessor(live); err == nil {
			m.SetManagedFields(lm.GetManagedFields())
		}
		return obj
	}
	if live == nil {
		live = h.codec.New()
	}
	return fm.UpdateNoErrors(live, obj, wi.manager)
}

// validateFieldManager checks the fieldManager parameter of a write as
// kube's Create, Update and PatchOptions validation does: 422 naming the
// options kind.
func validateFieldManager(r *http.Request) error {
	errs := validation.ValidateFieldManager(r.URL.Query().Get("fieldManager"), field.NewPath("fieldManager"))
	if len(errs) == 0 {
		return nil
	}
	kind := "CreateOptions"
	switch r.Method {
	case http.MethodPut:
		kind = "UpdateOptions"
	case http.MethodPatch:
		kind = "PatchOptions"
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}
