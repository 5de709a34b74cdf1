package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/deprecation"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/registry"
	"minik/internal/storage"
)

// maxBodyBytes bounds a request body, as kube-apiserver's 3 MiB object limit
// does (with room for the encoding).
const maxBodyBytes = 3 * 1024 * 1024

// objectStore holds one resource's objects: the generic create, get,
// list, update and delete on runtime.Object, with admission, the
// descriptor's strategy and hooks, field management, allocation and the
// etcd transaction. It knows nothing of HTTP; resourceHandler serves it,
// and the registry's subresources reach it as a registry.Store.
type objectStore struct {
	s     *Server
	res   *registry.Resource
	codec *objectCodec
	// fms are the resource's field managers, by subresource.
	fms fieldManagers
	// storageName is the resource's name in etcd keys.
	storageName string
	// alloc reserves what objects hold outside their keys; nil for most.
	alloc registry.Allocator
	// custom is set for a custom resource.
	custom *customResource
	// beforeWrite, when set (by tests only), runs before each
	// compare-and-swap of an update, with the object's key.
	beforeWrite func(ctx context.Context, key string)
}

// resourceHandler serves one resource's objectStore over HTTP: content
// negotiation, decoding, the REST verbs, subresources, watch framing and
// tables.
type resourceHandler struct {
	*objectStore
	// memo shares watch events' encodings among watchers (watchmemo.go).
	memo eventMemo
	// fieldKeys are the field-selector fields the resource supports.
	fieldKeys map[string]bool
	// gone is closed when a custom resource's handler stops serving (nil
	// for built-in resources).
	gone chan struct{}
	// deprecated is the warning every request of a deprecated kind gets
	// (deprecationWarning), or "".
	deprecated string
}

func newResourceHandler(s *Server, res *registry.Resource) *resourceHandler {
	h := &resourceHandler{objectStore: &objectStore{s: s, res: res, storageName: res.Name, alloc: s.allocatorFor(res.GroupResource())}}
	if res.StoredAs != nil {
		h.storageName = res.StoredAs.Resource
	}
	h.codec = newObjectCodec(res, res.StoredAs)
	if res.StoredAs == nil {
		h.deprecated = deprecationWarning(h.codec.New(), res.GroupVersionKind(), s.cfg.Version)
	}
	h.fieldKeys = map[string]bool{"metadata.name": true, "metadata.namespace": true}
	if res.Strategy.Fields != nil {
		for k := range res.Strategy.Fields(h.codec.New()) {
			h.fieldKeys[k] = true
		}
	}
	return h
}

func (h *objectStore) key(ns, name string) string {
	if !h.res.Namespaced {
		ns = ""
	}
	return storage.Key(h.storageName, ns, name)
}

// deprecationWarning is kube-apiserver's warning for a kind that its
// API version deprecates as of the server's version, from the type's
// lifecycle ("v1 ComponentStatus is deprecated in v1.19+"), or "".
func deprecationWarning(obj runtime.Object, gvk schema.GroupVersionKind, v VersionInfo) string {
	major, _ := strconv.Atoi(v.Major)
	minor, _ := strconv.Atoi(strings.TrimSuffix(v.Minor, "+"))
	if !deprecation.IsDeprecated(obj, major, minor) {
		return ""
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return deprecation.WarningMessage(obj)
}

// warnDeprecated adds the deprecation warning of the resource, if any.
func (h *resourceHandler) warnDeprecated(w http.ResponseWriter) {
	if h.deprecated != "" {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", h.deprecated))
	}
}

// serve dispatches a resource request to its verb.
func (h *resourceHandler) serve(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	h.warnDeprecated(w)
	if !h.res.Namespaced && info.Namespace != "" && h.res.Name != "namespaces" {
		writeError(w, r, errNoResource())
		return
	}
	if h.custom != nil && !h.serveCustom(w, r, info) {
		return
	}
	switch info.Verb {
	case "create", "update", "patch":
		// Field management records who writes: the fieldManager
		// parameter, else the client's user agent.
		r = r.WithContext(withWriteInfo(r.Context(), writeInfo{
			manager:     managerOrUserAgent(r.URL.Query().Get("fieldManager"), r.UserAgent()),
			subresource: info.Subresource,
		}))
	}
	if info.Subresource != "" {
		h.serveSubresource(w, r, info)
		return
	}
	if !h.res.Serves(info.Verb) {
		writeError(w, r, errMethodNotAllowed())
		return
	}
	switch info.Verb {
	case "get":
		h.serveGet(w, r, info)
	case "list":
		h.serveList(w, r, info)
	case "watch":
		h.serveWatch(w, r, info)
	case "create":
		if info.Name != "" {
			writeError(w, r, apierrors.NewMethodNotSupported(h.res.GroupResource(), "create"))
			return
		}
		h.serveCreate(w, r, info)
	case "update":
		h.serveUpdate(w, r, info, "")
	case "patch":
		h.servePatch(w, r, info, "")
	case "delete":
		h.serveDelete(w, r, info)
	case "deletecollection":
		h.serveDeleteCollection(w, r, info)
	default:
		writeError(w, r, apierrors.NewMethodNotSupported(h.res.GroupResource(), r.Method))
	}
}

// get reads one object.
func (h *objectStore) get(ctx context.Context, ns, name string) (runtime.Object, error) {
	kv, err := h.storeGet(ctx, h.key(ns, name))
	if err != nil {
		return nil, h.storageError(err, name)
	}
	return h.codec.decode(kv)
}

func (h *resourceHandler) serveGet(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	o, err := negotiateFor(r, objectTransforms)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := h.get(r.Context(), info.Namespace, info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.writeResult(w, r, o, http.StatusOK, obj)
}

// writeResult writes an object, or its table when one was asked for.
func (h *resourceHandler) writeResult(w http.ResponseWriter, r *http.Request, o output, code int, obj runtime.Object) {
	if o.table != nil {
		m, _ := meta.Accessor(obj)
		table, err := h.toTable(r, []runtime.Object{obj}, metav1.ListMeta{ResourceVersion: m.GetResourceVersion()})
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeObject(w, o, code, *o.table, table)
		return
	}
	if o.partial != nil {
		writeObject(w, o, code, *o.partial, partialOf(obj))
		return
	}
	writeObject(w, o, code, h.res.GroupVersion, obj)
}

// partialOf is obj's metadata as a PartialObjectMetadata.
func partialOf(obj runtime.Object) runtime.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: *metaOf(m)}
}

// selection is a parsed label and field selector.
type selection struct {
	labels labels.Selector
	fields fields.Selector
}

func (h *resourceHandler) parseSelection(r *http.Request) (selection, error) {
	q := r.URL.Query()
	sel := selection{labels: labels.Everything(), fields: fields.Everything()}
	if ls := q.Get("labelSelector"); ls != "" {
		l, err := labels.Parse(ls)
		if err != nil {
			return sel, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
		sel.labels = l
	}
	if fs := q.Get("fieldSelector"); fs != "" {
		f, err := fields.ParseSelector(fs)
		if err != nil {
			return sel, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
		for _, req := range f.Requirements() {
			if !h.fieldKeys[req.Field] {
				return sel, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
		sel.fields = f
	}
	return sel, nil
}

func (sel selection) empty() bool {
	return sel.labels.Empty() && sel.fields.Empty()
}

// matches tells whether an object is selected.
func (h *objectStore) matches(sel selection, obj runtime.Object) bool {
	if sel.empty() {
		return true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if !sel.labels.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	if sel.fields.Empty() {
		return true
	}
	set := fields.Set{"metadata.name": m.GetName()}
	if h.res.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	if h.res.Strategy.Fields != nil {
		for k, v := range h.res.Strategy.Fields(obj) {
			set[k] = v
		}
	}
	return sel.fields.Matches(set)
}

func (h *objectStore) collectionPrefix(ns string) string {
	if !h.res.Namespaced {
		ns = ""
	}
	if ns == "" {
		return storage.Key(h.storageName, "", "")
	}
	return storage.Key(h.storageName, ns, "")
}

// list reads a page of a collection, filtered by sel.
func (h *objectStore) list(ctx context.Context, ns string, sel selection, o storage.ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
	prefix := h.collectionPrefix(ns)
	var items []runtime.Object
	want := o.Limit
	for {
		res, err := h.storeList(ctx, prefix, o)
		if err != nil {
			return nil, metav1.ListMeta{}, h.listError(err)
		}
		for _, kv := range res.Items {
			obj, err := h.codec.decode(kv)
			if err != nil {
				return nil, metav1.ListMeta{}, apierrors.NewInternalError(err)
			}
			if h.matches(sel, obj) {
				items = append(items, obj)
			}
		}
		lm := metav1.ListMeta{ResourceVersion: strconv.FormatInt(res.Revision, 10), Continue: res.Continue}
		if res.Continue != "" && sel.empty() {
			rem := res.Remaining
			lm.RemainingItemCount = &rem
		}
		if res.Continue == "" || want == 0 || int64(len(items)) >= want {
			return items, lm, nil
		}
		// Selectors filtered some objects out: read on until the page is full.
		o.Continue = res.Continue
		o.Revision, o.Stale = 0, false
		o.Limit = want - int64(len(items))
	}
}

func (h *objectStore) listError(err error) error {
	switch {
	case errors.Is(err, storage.ErrCompacted):
		return apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	case errors.Is(err, storage.ErrBadContinue):
		return apierrors.NewBadRequest("continue key is not valid: invalid continue token")
	case errors.Is(err, storage.ErrFutureRevision):
		return apierrors.NewTimeoutError("Too large resource version", 1)
	}
	return apierrors.NewInternalError(err)
}

func (h *resourceHandler) serveList(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	o, err := negotiateFor(r, listTransforms)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sel, err := h.parseSelection(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	lo, err := listOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if h.streamable(o, lo) {
		h.streamList(w, r, o, info.Namespace, sel, lo)
		return
	}
	items, lm, err := h.list(r.Context(), info.Namespace, sel, lo)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if o.table != nil {
		table, err := h.toTable(r, items, lm)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeObject(w, o, http.StatusOK, *o.table, table)
		return
	}
	if o.partial != nil {
		list := &metav1.PartialObjectMetadataList{ListMeta: lm, Items: make([]metav1.PartialObjectMetadata, 0, len(items))}
		for _, obj := range items {
			if p, ok := partialOf(obj).(*metav1.PartialObjectMetadata); ok {
				list.Items = append(list.Items, *p)
			}
		}
		writeObject(w, o, http.StatusOK, *o.partial, list)
		return
	}
	list := h.codec.NewList()
	if err := meta.SetList(list, items); err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	la, _ := meta.ListAccessor(list)
	la.SetResourceVersion(lm.ResourceVersion)
	la.SetContinue(lm.Continue)
	la.SetRemainingItemCount(lm.RemainingItemCount)
	writeObject(w, o, http.StatusOK, h.res.GroupVersion, list)
}

// listOptions reads limit, continue, resourceVersion and
// resourceVersionMatch as kube-apiserver does.
func listOptions(r *http.Request) (storage.ListOptions, error) {
	q := r.URL.Query()
	var o storage.ListOptions
	if l := q.Get("limit"); l != "" {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil || n < 0 {
			return o, apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q", l))
		}
		o.Limit = n
	}
	o.Continue = q.Get("continue")
	rv := q.Get("resourceVersion")
	match := q.Get("resourceVersionMatch")
	if o.Continue != "" && rv != "" && rv != "0" {
		return o, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	if match != "" && rv == "" {
		return o, apierrors.NewBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
	}
	if rv != "" && rv != "0" {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n <= 0 {
			return o, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
		}
		if match == string(metav1.ResourceVersionMatchExact) {
			o.Revision = n
		} else {
			o.Stale, o.MinRevision = true, n
		}
	} else if rv == "0" && o.Continue == "" {
		o.Stale = true
	}
	return o, nil
}

// readBody reads a request body within the size limit.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("read request body: %v", err))
	}
	if len(body) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError("limit is 3145728")
	}
	return body, nil
}

// decodeBody decodes a request body into an object of the resource's kind
// and reports unknown fields as fieldValidation asks: warnings (Warn, the
// default), a 400 (Strict) or nothing (Ignore).
func (h *resourceHandler) decodeBody(w http.ResponseWriter, r *http.Request, body []byte) (runtime.Object, error) {
	if h.custom != nil {
		return h.decodeCustom(w, r, body)
	}
	info, err := inputSerializer(r)
	if err != nil {
		return nil, err
	}
	obj := h.codec.New()
	gvk := h.res.GroupVersionKind()
	dec := info.Serializer
	if info.StrictSerializer != nil {
		dec = info.StrictSerializer
	}
	out, got, err := dec.Decode(body, &gvk, obj)
	if err != nil && !runtime.IsStrictDecodingError(err) {
		return nil, cannotBeHandled(gvk, err)
	}
	if got != nil && (got.Group != gvk.Group || got.Version != gvk.Version) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", got.GroupVersion(), gvk.GroupVersion()))
	}
	if got != nil && got.Kind != gvk.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", got.Kind, gvk.Kind))
	}
	if err != nil {
		if err := reportUnknownFields(w, r, err); err != nil {
			return nil, cannotBeHandled(gvk, err)
		}
	}
	if out != obj {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body does not hold a %s", gvk.Kind))
	}
	return obj, nil
}

// reportUnknownFields handles a strict decoding error per fieldValidation.
func reportUnknownFields(w http.ResponseWriter, r *http.Request, err error) error {
	strict, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return nil
	}
	switch r.URL.Query().Get("fieldValidation") {
	case "Ignore":
		return nil
	case "Strict":
		return err
	}
	for _, e := range strict.Errors() {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", e.Error()))
	}
	return nil
}

// validFieldValidation checks the fieldValidation parameter.
func validFieldValidation(r *http.Request) error {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "", "Ignore", "Warn", "Strict":
		return nil
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("fieldValidation parameter unsupported: %q. Supported parameters: Ignore, Warn, and Strict", v))
	}
}

// isDryRun reads the dryRun parameter; only "All" is valid.
func isDryRun(r *http.Request) (bool, error) {
	vals := r.URL.Query()["dryRun"]
	for _, v := range vals {
		if v != metav1.DryRunAll {
			return false, apierrors.NewBadRequest(fmt.Sprintf("Invalid dry run value: %s. Supported value is: All", v))
		}
	}
	return len(vals) > 0, nil
}

// writeRequest is what every write starts from: the response encoding,
// the dryRun flag and the body, with the query checked.
type writeRequest struct {
	out    output
	dryRun bool
	body   []byte
}

// readWrite negotiates the response, checks fieldValidation and dryRun
// and reads the body of a write request.
func readWrite(r *http.Request) (*writeRequest, error) {
	o, err := negotiateOutput(r, false)
	if err != nil {
		return nil, err
	}
	if err := validFieldValidation(r); err != nil {
		return nil, err
	}
	dryRun, err := isDryRun(r)
	if err != nil {
		return nil, err
	}
	if err := validateFieldManager(r); err != nil {
		return nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return &writeRequest{out: o, dryRun: dryRun, body: body}, nil
}

func (h *resourceHandler) serveCreate(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	wr, err := readWrite(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := h.decodeBody(w, r, wr.body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	noteRequestObject(r.Context(), obj)
	o := wr.out
	out, err := h.create(r.Context(), info.Namespace, obj, wr.dryRun)
	if err != nil {
		writeError(w, r, err)
		return
	}
	noteResponseObject(r.Context(), out)
	writeObject(w, o, http.StatusCreated, h.res.GroupVersion, out)
}

// create admits, validates and stores a new object.
func (h *objectStore) create(ctx context.Context, ns string, obj runtime.Object, dryRun bool) (_ runtime.Object, err error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if h.res.Namespaced {
		if m.GetNamespace() == "" {
			m.SetNamespace(ns)
		} else if ns != "" && m.GetNamespace() != ns {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		m.SetNamespace("")
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		// As kube's name generator: the base is cut so that the name with
		// its five random characters stays within 63.
		base := m.GetGenerateName()
		if len(base) > 58 {
			base = base[:58]
		}
		m.SetName(base + utilrand.String(5))
	}
	strategy := h.res.Strategy
	if strategy.Default != nil {
		strategy.Default(obj)
	}
	obj = h.manageFields(ctx, nil, obj, "", m.GetManagedFields())
	if m, err = meta.Accessor(obj); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	attrs := h.admissionAttributes(ctx, admission.Create, "", obj, nil, dryRun)
	if err := h.s.chain.Admit(ctx, attrs); err != nil {
		return nil, err
	}
	m.SetUID(types.UID(uuid.NewUUID()))
	m.SetCreationTimestamp(metav1.NewTime(h.s.clock.Now().Truncate(1e9)))
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
	if strategy.NoGeneration {
		m.SetGeneration(0)
	} else {
		m.SetGeneration(1)
	}
	if h.res.HasStatus && !strategy.KeepStatusOnCreate {
		resetStatus(obj)
	}
	if strategy.PrepareForCreate != nil {
		strategy.PrepareForCreate(ctx, obj)
	}
	if strategy.Validate != nil {
		if errs := strategy.Validate(ctx, obj); len(errs) > 0 {
			return nil, apierrors.NewInvalid(h.res.GroupVersionKind().GroupKind(), m.GetName(), errs)
		}
	}
	undo, err := h.allocate(ctx, obj, nil, dryRun)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()
	if err := h.s.chain.Validate(ctx, attrs); err != nil {
		return nil, err
	}
	data, err := h.codec.encode(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	key := h.key(m.GetNamespace(), m.GetName())
	if dryRun {
		if _, err := h.s.store.Get(ctx, key); err == nil {
			return nil, apierrors.NewAlreadyExists(h.res.GroupResource(), m.GetName())
		}
		return obj, nil
	}
	rev, err := h.s.store.Create(ctx, key, data)
	if err != nil {
		return nil, h.storageError(err, m.GetName())
	}
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	return obj, nil
}

func (h *objectStore) admissionAttributes(ctx context.Context, op admission.Operation, sub string, obj, old runtime.Object, dryRun bool) *admission.Attributes {
	a := &admission.Attributes{
		Operation: op, Kind: h.res.GroupVersionKind(), Resource: h.res.GroupVersionResource(),
		Subresource: sub, Object: obj, OldObject: old, User: auth.UserFrom(ctx), DryRun: dryRun,
	}
	src := obj
	if src == nil {
		src = old
	}
	if m, err := meta.Accessor(src); err == nil {
		a.Namespace, a.Name = m.GetNamespace(), m.GetName()
	}
	return a
}

// storageError maps a storage error about an object to a Status error.
func (h *objectStore) storageError(err error, name string) error {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(h.res.GroupResource(), name)
	case errors.Is(err, storage.ErrExists):
		return apierrors.NewAlreadyExists(h.res.GroupResource(), name)
	case errors.Is(err, storage.ErrConflict):
		return conflict(h.res, name)
	}
	return apierrors.NewInternalError(err)
}

func conflict(res *registry.Resource, name string) error {
	return apierrors.NewConflict(res.GroupResource(), name, errors.New(registry.OptimisticLockErrorMsg))
}

// mutation computes the new object from the stored one. It returns the
// object to write and the resourceVersion the client required ("" for
// none).
type mutation func(current runtime.Object) (updated runtime.Object, err error)

// maxUpdateAttempts bounds how often an update that named no
// resourceVersion is tried while other writers keep changing the object.
const maxUpdateAttempts = 20

// update applies mut to the stored object, retrying on conflicts unless
// the client named a resourceVersion. sub is "" or a subresource. It
// returns the object written, or an error: after maxUpdateAttempts lost
// races kube's 409 Conflict, so that nothing answers success for a write
// that did not happen.
//
// The first attempt starts from the watch cache's copy of the object, as
// kube's does: it saves a read of etcd per update. Whatever fails from a
// copy that may be stale (a conflict, an error, also no change to write)
// is tried again from etcd's, as a lost race is.
func (h *objectStore) update(ctx context.Context, ns, name, sub string, dryRun bool, mut mutation) (runtime.Object, error) {
	fromCache := !dryRun
	for attempt := 1; ; {
		kv, stale, err := h.updateStart(ctx, h.key(ns, name), fromCache)
		fromCache = false
		if err != nil {
			return nil, h.storageError(err, name)
		}
		current, err := h.codec.decode(kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		updated, err := mut(current.DeepCopyObject())
		var out runtime.Object
		retry := false
		if err == nil {
			out, retry, err = h.tryUpdate(ctx, kv, current, updated, sub, dryRun, stale)
		}
		if stale && err != nil {
			// Decided on a copy that may be stale: etcd's decides.
			retry, err = true, nil
		}
		if !retry {
			return out, err
		}
		if attempt++; attempt > maxUpdateAttempts {
			return nil, conflict(h.res, name)
		}
	}
}

// tryUpdate runs the update pipeline once. retry is true when the write
// lost a race the client did not ask to detect, or, when kv may be stale
// (a cached copy), when it would write nothing: that must be decided on
// etcd's copy.
func (h *objectStore) tryUpdate(ctx context.Context, kv storage.KV, current, obj runtime.Object, sub string, dryRun, stale bool) (_ runtime.Object, retry bool, err error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	cm, _ := meta.Accessor(current)
	if m.GetName() != cm.GetName() {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), cm.GetName()))
	}
	if h.res.Namespaced && m.GetNamespace() != "" && m.GetNamespace() != cm.GetNamespace() {
		return nil, false, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	m.SetNamespace(cm.GetNamespace())
	required := m.GetResourceVersion()
	if required != "" && required != cm.GetResourceVersion() {
		return nil, false, conflict(h.res, m.GetName())
	}
	if req, ok := registry.RequestFrom(ctx); ok && required == "" && req.Verb == "update" && h.res.Strategy.RequireResourceVersion {
		return nil, false, apierrors.NewInvalid(h.res.GroupVersionKind().GroupKind(), m.GetName(),
			field.ErrorList{field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
	}
	// An unconditional update is checked against the object it replaces.
	m.SetResourceVersion(cm.GetResourceVersion())
	sent := m.GetManagedFields()
	strategy := h.res.Strategy
	bumpsGeneration := sub == ""
	switch sub {
	case "status":
		if ss := strategy.Status; ss != nil {
			// The kind's own status strategy merges and validates.
			next := ss.Merge(current.DeepCopyObject(), obj)
			nm, _ := meta.Accessor(next)
			nm.SetResourceVersion(m.GetResourceVersion())
			obj, m = next, nm
			strategy.PrepareForUpdate, strategy.ValidateUpdate = nil, ss.ValidateUpdate
			break
		}
		// Only the status (and, for some kinds, annotations) changes
		// through /status, and the main resource's update preparation does
		// not apply.
		next := current.DeepCopyObject()
		copyStatus(next, obj)
		nm, _ := meta.Accessor(next)
		if strategy.StatusUpdatesAnnotations {
			nm.SetAnnotations(m.GetAnnotations())
		}
		nm.SetResourceVersion(m.GetResourceVersion())
		obj, m = next, nm
		strategy.PrepareForUpdate = nil
		if validateStatus, validate := strategy.ValidateStatus, strategy.ValidateUpdate; validateStatus != nil {
			strategy.ValidateUpdate = func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
				var errs field.ErrorList
				if validate != nil {
					errs = validate(ctx, obj, old)
				}
				return append(errs, validateStatus(ctx, obj)...)
			}
		}
	case "":
		if h.res.HasStatus {
			copyStatus(obj, current)
		}
	default:
		sr := h.res.Subresource(sub)
		switch {
		case sr != nil && sr.Update != nil:
			// Only what the subresource writes changes; a change of the
			// spec bumps the generation, as through the object itself.
			ss := sr.Update
			next := ss.Merge(current.DeepCopyObject(), obj)
			nm, _ := meta.Accessor(next)
			nm.SetResourceVersion(m.GetResourceVersion())
			obj, m = next, nm
			strategy.PrepareForUpdate, strategy.ValidateUpdate = nil, ss.ValidateUpdate
			bumpsGeneration = !ss.Narrow
			if ss.Narrow {
				// The API server's own narrow writes: the kind's
				// defaulting and update strategy do not apply.
				strategy = registry.Strategy{NoGeneration: true, ValidateUpdate: ss.ValidateUpdate}
			}
		case sr != nil && sr.Create != nil:
			// A create subresource's write of its object (pods/binding)
			// is the API server's own narrow write.
			strategy = registry.Strategy{NoGeneration: true}
		}
	}
	if strategy.Default != nil {
		strategy.Default(obj)
	}
	// Fields the system owns keep their stored values.
	if m.GetUID() == "" {
		m.SetUID(cm.GetUID())
	}
	m.SetCreationTimestamp(cm.GetCreationTimestamp())
	m.SetDeletionTimestamp(cm.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(cm.GetDeletionGracePeriodSeconds())
	m.SetGeneration(cm.GetGeneration())
	m.SetSelfLink("")
	obj = h.manageFields(ctx, current, obj, sub, sent)
	if m, err = meta.Accessor(obj); err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	attrs := h.admissionAttributes(ctx, admission.Update, sub, obj, current, dryRun)
	if err := h.s.chain.Admit(ctx, attrs); err != nil {
		return nil, false, err
	}
	if strategy.PrepareForUpdate != nil {
		strategy.PrepareForUpdate(ctx, obj, current)
	}
	if !strategy.NoGeneration && bumpsGeneration && h.specChanged(obj, current) {
		m.SetGeneration(cm.GetGeneration() + 1)
	}
	if strategy.ValidateUpdate != nil {
		if errs := strategy.ValidateUpdate(ctx, obj, current); len(errs) > 0 {
			return nil, false, apierrors.NewInvalid(h.res.GroupVersionKind().GroupKind(), m.GetName(), errs)
		}
	}
	undo, err := h.allocate(ctx, obj, current, dryRun)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if err != nil || retry {
			undo()
		}
	}()
	if err := h.s.chain.Validate(ctx, attrs); err != nil {
		return nil, false, err
	}
	data, err := h.codec.encode(obj)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	if string(data) == string(kv.Value) {
		if stale {
			return nil, true, nil
		}
		// Nothing changed: nothing is written and the resourceVersion stays.
		m.SetResourceVersion(cm.GetResourceVersion())
		return obj, false, nil
	}
	if dryRun {
		return obj, false, nil
	}
	if h.beforeWrite != nil {
		h.beforeWrite(ctx, kv.Key)
	}
	if m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0 && !h.holdsDeletion(obj) {
		// The last finalizer is gone: the object goes.
		if _, err := h.s.store.Delete(ctx, kv.Key, kv.Revision); err != nil {
			if errors.Is(err, storage.ErrConflict) && required == "" {
				return nil, true, nil
			}
			return nil, false, h.storageError(err, m.GetName())
		}
		h.release(ctx, current, nil)
		return obj, false, nil
	}
	rev, err := h.s.store.Update(ctx, kv.Key, kv.Revision, data)
	if err != nil {
		if errors.Is(err, storage.ErrConflict) && required == "" {
			return nil, true, nil
		}
		return nil, false, h.storageError(err, m.GetName())
	}
	h.release(ctx, current, obj)
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	return obj, false, nil
}

func (h *resourceHandler) serveUpdate(w http.ResponseWriter, r *http.Request, info *RequestInfo, sub string) {
	wr, err := readWrite(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	o, dryRun := wr.out, wr.dryRun
	obj, err := h.decodeBody(w, r, wr.body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	noteRequestObject(r.Context(), obj)
	if m, err := meta.Accessor(obj); err == nil && m.GetName() != "" && m.GetName() != info.Name {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), info.Name)))
		return
	}
	out, err := h.update(r.Context(), info.Namespace, info.Name, sub, dryRun, func(runtime.Object) (runtime.Object, error) {
		return obj.DeepCopyObject(), nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	noteResponseObject(r.Context(), out)
	writeObject(w, o, http.StatusOK, h.res.GroupVersion, out)
}

// specChanged tells whether an update changes what bumps generation.
func (h *objectStore) specChanged(obj, current runtime.Object) bool {
	if h.custom != nil {
		return customSpecChanged(obj.(*unstructured.Unstructured), current.(*unstructured.Unstructured), h.res.HasStatus)
	}
	return specChanged(obj, current)
}

// cannotBeHandled is kube's 400 for a body that does not decode as the
// resource's kind.
func cannotBeHandled(gvk schema.GroupVersionKind, err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err))
}
