package api

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"

	"minik/internal/registry"
	"minik/internal/storage"
)

// Custom resources are served as kube's apiextensions-apiserver serves
// them: the API server watches CustomResourceDefinitions in storage and,
// for each one whose names are accepted (NamesAccepted) or that is
// Established, routes its served versions to the generic REST layer with
// unstructured objects (JSON and YAML only). Discovery and OpenAPI list a
// definition once it is Established. The conditions are set by the "crd"
// controller; deleting a definition adds the
// customresourcecleanup.apiextensions.k8s.io finalizer and the Terminating
// condition, and that controller deletes the custom resources before it
// lets the definition go.

// CustomResourceObserver is told, each time they change, the custom
// resources discovery lists. api.New registers the Config.Extra handlers
// that implement it (the OpenAPI handler).
type CustomResourceObserver interface {
	SetCustomResources(crs []*registry.CustomResource)
}

// crdRetry is how long the CustomResourceDefinition watch waits before it
// lists again after losing its watch.
const crdRetry = time.Second

// crdServer keeps the server's routes in step with the stored
// CustomResourceDefinitions.
type crdServer struct {
	s         *Server
	observers []CustomResourceObserver

	mu sync.Mutex
	// served are the definitions served, by name.
	served map[string]*crdServing
}

// crdServing is one definition's handlers.
type crdServing struct {
	def      *registry.Definition
	handlers []*resourceHandler
	// gone is closed when the handlers stop serving; their watches end.
	gone chan struct{}
	// terminating mirrors the Terminating condition: creates are refused.
	terminating atomic.Bool
	// conv converts between the definition's versions; nil relabels.
	conv runtime.ObjectConvertor
}

func newCRDServer(s *Server) *crdServer {
	c := &crdServer{s: s, served: map[string]*crdServing{}}
	for _, h := range s.cfg.Extra {
		if o, ok := h.(CustomResourceObserver); ok {
			c.observers = append(c.observers, o)
		}
	}
	return c
}

// start loads the stored definitions, so that their resources are served
// when start returns, then follows their changes in the background until
// ctx is done or the server stops. A server without the
// customresourcedefinitions resource serves no custom resources.
func (c *crdServer) start(ctx context.Context) error {
	var h *resourceHandler
	for _, bh := range c.s.builtin.handlers {
		if bh.res.Defines != nil {
			h = bh
			break
		}
	}
	if h == nil {
		return nil
	}
	rev, err := c.sync(ctx, h)
	if err != nil {
		return fmt.Errorf("custom resource definitions: %w", err)
	}
	c.s.background.Add(1)
	go func() {
		defer c.s.background.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-c.s.stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
		for ctx.Err() == nil {
			c.follow(ctx, h, rev)
			select {
			case <-ctx.Done():
				return
			case <-time.After(crdRetry):
			}
			if rev, err = c.sync(ctx, h); err != nil && ctx.Err() == nil {
				c.s.log.Warn("list custom resource definitions", "err", err)
			}
		}
	}()
	return nil
}

// sync serves exactly the stored definitions and returns the revision read.
func (c *crdServer) sync(ctx context.Context, h *resourceHandler) (int64, error) {
	res, err := c.s.store.List(ctx, h.collectionPrefix(""), storage.ListOptions{})
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kv := range res.Items {
		obj, err := h.codec.decode(kv)
		if err != nil {
			c.s.log.Warn("decode custom resource definition", "key", kv.Key, "err", err)
			continue
		}
		def, err := h.res.Defines(obj)
		if err != nil {
			c.s.log.Warn("cannot serve custom resource definition", "key", kv.Key, "err", err)
			continue
		}
		seen[def.Name] = true
		c.setLocked(def)
	}
	for name := range c.served {
		if !seen[name] {
			c.removeLocked(name)
		}
	}
	c.publishLocked()
	return res.Revision, nil
}

// follow applies the changes after rev until the watch ends.
func (c *crdServer) follow(ctx context.Context, h *resourceHandler, rev int64) {
	for ev := range c.s.store.Watch(ctx, h.collectionPrefix(""), rev) {
		switch ev.Type {
		case storage.Error:
			return
		case storage.Progress:
			continue
		}
		obj, err := h.codec.decode(ev.Object)
		if err != nil {
			c.s.log.Warn("decode custom resource definition", "key", ev.Object.Key, "err", err)
			continue
		}
		def, err := h.res.Defines(obj)
		if err != nil {
			c.s.log.Warn("cannot serve custom resource definition", "key", ev.Object.Key, "err", err)
			continue
		}
		c.mu.Lock()
		if ev.Type == storage.Deleted {
			c.removeLocked(def.Name)
		} else {
			c.setLocked(def)
		}
		c.publishLocked()
		c.mu.Unlock()
	}
}

// setLocked serves def, keeping the handlers it has when what they were
// built from did not change (so that open watches go on).
func (c *crdServer) setLocked(def *registry.Definition) {
	if old, ok := c.served[def.Name]; ok {
		if equality.Semantic.DeepEqual(old.def.Identity, def.Identity) {
			old.def = def
			old.terminating.Store(def.Terminating)
			return
		}
		c.removeLocked(def.Name)
	}
	if !def.Serve {
		return
	}
	conv, err := def.NewConverter(c.s.crdConverters)
	if err != nil {
		c.s.log.Warn("cannot serve custom resource definition", "crd", def.Name, "err", err)
		return
	}
	sv := &crdServing{def: def, gone: make(chan struct{}), conv: conv}
	sv.terminating.Store(def.Terminating)
	for _, cr := range def.Resources {
		if _, builtin := c.s.builtin.handlers[cr.Resource.GroupVersionResource()]; builtin {
			// A built-in resource of that name wins, as in kube.
			continue
		}
		sv.handlers = append(sv.handlers, newCustomResourceHandler(c.s, cr, sv))
	}
	c.served[def.Name] = sv
}

func (c *crdServer) removeLocked(name string) {
	if sv, ok := c.served[name]; ok {
		close(sv.gone)
		delete(c.served, name)
	}
}

// publishLocked stores the routes of the built-in and the served custom
// resources and tells the observers.
func (c *crdServer) publishLocked() {
	var hs []*resourceHandler
	discovered := map[*resourceHandler]bool{}
	for _, sv := range c.served {
		for _, h := range sv.handlers {
			hs = append(hs, h)
			discovered[h] = sv.def.Discover
		}
	}
	// Custom groups come after the built-in ones, by name; a group's
	// versions by kube's version priority, so that the first is preferred.
	sort.Slice(hs, func(i, j int) bool {
		a, b := hs[i].res, hs[j].res
		if a.GroupVersion.Group != b.GroupVersion.Group {
			return a.GroupVersion.Group < b.GroupVersion.Group
		}
		if a.GroupVersion.Version != b.GroupVersion.Version {
			return version.CompareKubeAwareVersionStrings(a.GroupVersion.Version, b.GroupVersion.Version) > 0
		}
		return a.Name < b.Name
	})
	t := c.s.builtin.clone()
	var crs []*registry.CustomResource
	for _, h := range hs {
		t.add(h, discovered[h])
		if discovered[h] {
			crs = append(crs, h.custom.cr)
		}
	}
	c.s.routes.Store(t)
	for _, o := range c.observers {
		o.SetCustomResources(crs)
	}
}

// customResource is what a custom resource's handler knows beyond its
// descriptor.
type customResource struct {
	cr      *registry.CustomResource
	serving *crdServing
}

// newCustomResourceHandler builds the handler of one served version of a
// custom resource.
func newCustomResourceHandler(s *Server, cr *registry.CustomResource, sv *crdServing) *resourceHandler {
	res := cr.Resource
	h := &resourceHandler{
		objectStore: &objectStore{
			s: s, res: res, storageName: res.GroupVersion.Group + "/" + res.Name,
			custom: &customResource{cr: cr, serving: sv},
		},
		gone:      sv.gone,
		fieldKeys: map[string]bool{"metadata.name": true, "metadata.namespace": true},
	}
	h.codec = &objectCodec{res: res, custom: &customCodec{
		gvk: res.GroupVersionKind(), listGVK: res.GroupVersion.WithKind(cr.ListKind),
		storage: schema.GroupVersion{Group: res.GroupVersion.Group, Version: cr.Storage}, def: res.Strategy.Default,
		conv: sv.conv,
	}}
	// The version's selectableFields.
	if res.Strategy.Fields != nil {
		for k := range res.Strategy.Fields(h.codec.New()) {
			h.fieldKeys[k] = true
		}
	}
	return h
}

// customCodec stores unstructured objects as JSON at the definition's
// storage version and reads them at the served one, converted as the
// definition says (see crdconversion.go), pruned and defaulted.
type customCodec struct {
	gvk, listGVK schema.GroupVersionKind
	storage      schema.GroupVersion
	def          func(runtime.Object)
	// conv converts between versions; nil relabels (strategy None).
	conv runtime.ObjectConvertor
}

func (c *customCodec) New() runtime.Object {
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	u.SetGroupVersionKind(c.gvk)
	return u
}

func (c *customCodec) NewList() runtime.Object {
	l := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
	l.SetGroupVersionKind(c.listGVK)
	return l
}

func (c *customCodec) decode(kv storage.KV) (runtime.Object, error) {
	var m map[string]interface{}
	if err := utiljson.Unmarshal(kv.Value, &m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", kv.Key, err)
	}
	u, err := convertCustom(c.conv, &unstructured.Unstructured{Object: m}, c.gvk.GroupVersion())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if c.def != nil {
		c.def(u)
	}
	u.SetResourceVersion(fmt.Sprint(kv.Revision))
	return u, nil
}

func (c *customCodec) encode(obj runtime.Object) ([]byte, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("encode %s: unexpected object type %T", c.gvk.Kind, obj)
	}
	if c.conv != nil && u.GetAPIVersion() != c.storage.String() {
		if u.GetAPIVersion() == "" {
			u = u.DeepCopy()
			u.SetAPIVersion(c.gvk.GroupVersion().String())
		}
		converted, err := convertCustom(c.conv, u, c.storage)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		u = converted
	}
	m := make(map[string]interface{}, len(u.Object))
	for k, v := range u.Object {
		m[k] = v
	}
	if md, ok := u.Object["metadata"].(map[string]interface{}); ok {
		cp := make(map[string]interface{}, len(md))
		for k, v := range md {
			if k != "resourceVersion" {
				cp[k] = v
			}
		}
		m["metadata"] = cp
	}
	m["apiVersion"] = c.storage.String()
	m["kind"] = c.gvk.Kind
	return json.Marshal(m)
}

// customSpecChanged tells whether anything but metadata (and, when the
// resource has a status subresource, the status) differs: what bumps a
// custom resource's generation.
func customSpecChanged(a, b *unstructured.Unstructured, hasStatus bool) bool {
	skip := func(k string) bool {
		return k == "metadata" || k == "apiVersion" || k == "kind" || (hasStatus && k == "status")
	}
	for k, v := range a.Object {
		if skip(k) {
			continue
		}
		if w, ok := b.Object[k]; !ok || !equality.Semantic.DeepEqual(v, w) {
			return true
		}
	}
	for k := range b.Object {
		if _, ok := a.Object[k]; !ok && !skip(k) {
			return true
		}
	}
	return false
}

// customMediaTypes are the media types custom resources are served in.
const customMediaTypes = "application/json, application/yaml"

// serveCustom checks what differs for custom resources before the generic
// verbs: no protobuf (406, as kube answers), no creates while the
// definition terminates (405).
func (h *resourceHandler) serveCustom(w http.ResponseWriter, r *http.Request, info *RequestInfo) bool {
	if accept := r.Header.Get("Accept"); accept != "" {
		var kept []string
		for _, clause := range strings.Split(accept, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(clause))
			if err == nil && mt == mediaProtobuf {
				continue
			}
			kept = append(kept, clause)
		}
		if len(kept) == 0 {
			r.Header.Set("Accept", mediaJSON)
			writeError(w, r, apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "", "only the following media types are accepted: "+customMediaTypes, 0, false))
			return false
		}
		r.Header.Set("Accept", strings.Join(kept, ","))
	}
	if info.Verb == "create" && info.Subresource == "" && h.custom.serving.terminating.Load() {
		err := apierrors.NewMethodNotSupported(h.res.GroupResource(), info.Verb)
		err.ErrStatus.Message = fmt.Sprintf("%v not allowed while custom resource definition is terminating", info.Verb)
		writeError(w, r, err)
		return false
	}
	return true
}

// decodeCustom decodes a request body (JSON or YAML) into an unstructured
// object of the resource's kind. Fields the schema does not declare are
// pruned and reported as fieldValidation asks.
func (h *resourceHandler) decodeCustom(w http.ResponseWriter, r *http.Request, body []byte) (runtime.Object, error) {
	gvk := h.res.GroupVersionKind()
	ct := r.Header.Get("Content-Type")
	mt := mediaJSON
	if ct != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return nil, unsupportedCustomMediaType()
		}
	}
	switch mt {
	case mediaJSON:
	case mediaYAML:
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, cannotBeHandled(gvk, err)
		}
		body = j
	default:
		return nil, unsupportedCustomMediaType()
	}
	var m map[string]interface{}
	if err := utiljson.Unmarshal(body, &m); err != nil {
		return nil, cannotBeHandled(gvk, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if m == nil || u.GetKind() == "" {
		return nil, cannotBeHandled(gvk, fmt.Errorf("Object 'Kind' is missing in '%s'", strings.TrimSpace(string(body))))
	}
	got, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil || got.Group != gvk.Group || !h.custom.cr.Serves(got.Version) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", u.GetAPIVersion(), gvk.GroupVersion()))
	}
	if u.GetKind() != gvk.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", u.GetKind(), gvk.Kind))
	}
	u.SetAPIVersion(gvk.GroupVersion().String())
	if unknown := h.custom.cr.Prune(m); len(unknown) > 0 {
		errs := make([]error, 0, len(unknown))
		for _, p := range unknown {
			errs = append(errs, fmt.Errorf("unknown field %q", p))
		}
		if err := reportUnknownFields(w, r, runtime.NewStrictDecodingError(errs)); err != nil {
			return nil, cannotBeHandled(gvk, err)
		}
	}
	return u, nil
}

func unsupportedCustomMediaType() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + customMediaTypes,
	}}
}

// customPatchMediaTypeError is kube's 415 for a strategic merge patch (or
// any unknown patch type) of a custom resource.
func customPatchMediaTypeError() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
	}}
}

// customScale is the Scale of a custom resource, read at its definition's
// scale paths.
func (h *resourceHandler) customScaleOf(obj runtime.Object) (runtime.Object, error) {
	u := obj.(*unstructured.Unstructured)
	sc := h.custom.cr.Scale
	out, err := scaleOf(&unstructured.Unstructured{Object: map[string]interface{}{"metadata": u.Object["metadata"]}})
	if err != nil {
		return nil, err
	}
	if v, ok, _ := unstructured.NestedInt64(u.Object, registry.FieldPathSegments(sc.SpecReplicasPath)...); ok {
		out.Spec.Replicas = int32(v)
	}
	if v, ok, _ := unstructured.NestedInt64(u.Object, registry.FieldPathSegments(sc.StatusReplicasPath)...); ok {
		out.Status.Replicas = int32(v)
	}
	if sc.LabelSelectorPath != nil {
		if v, ok, _ := unstructured.NestedString(u.Object, registry.FieldPathSegments(*sc.LabelSelectorPath)...); ok {
			out.Status.Selector = v
		}
	}
	return out, nil
}

// setCustomReplicas sets a custom resource's replicas at its scale path.
func (h *resourceHandler) setCustomReplicas(obj runtime.Object, replicas int32) (runtime.Object, error) {
	u := obj.DeepCopyObject().(*unstructured.Unstructured)
	if err := unstructured.SetNestedField(u.Object, int64(replicas), registry.FieldPathSegments(h.custom.cr.Scale.SpecReplicasPath)...); err != nil {
		return nil, err
	}
	return u, nil
}

// customCreater and customConvertor let the field manager handle
// unstructured objects: new objects are empty ones of the kind, and
// conversion only relabels the version.
type customCreater struct{ gvk schema.GroupVersionKind }

func (c customCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

type customConvertor struct{}

func (customConvertor) Convert(in, out, _ interface{}) error {
	u, ok := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return fmt.Errorf("unexpected conversion %T to %T", in, out)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (customConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected object type %T", in)
	}
	out := u.DeepCopy()
	if gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()}); ok {
		out.SetGroupVersionKind(gvk)
	}
	return out, nil
}

func (customConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}
