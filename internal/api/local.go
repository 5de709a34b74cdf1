package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/registry"
)

// Local resources are read-only resources whose objects are not stored
// but computed by a provider in the process, as an API group that
// kube-aggregator serves through a local APIService (metrics.k8s.io from
// metrics-server). The chain treats them as any resource: authentication,
// RBAC on their group and resource, the in-flight limit. The server
// answers get and list (label and field selectors, limit and continue,
// tables, JSON, YAML and protobuf) from the provider and lists them in discovery with those two
// verbs; every other verb is 405 MethodNotSupported, as kube's generic
// server answers for a storage that only gets and lists.

// LocalResource is a read-only resource answered by a provider.
type LocalResource struct {
	// Resource describes it for routing, discovery, OpenAPI and tables; its
	// kinds must be in Scheme.
	Resource *registry.Resource
	// Get returns one object, or a kube error (NotFound, ServiceUnavailable).
	Get func(ctx context.Context, namespace, name string) (runtime.Object, error)
	// List returns the objects of a namespace ("": all); the server
	// filters them by the request's selectors.
	List func(ctx context.Context, namespace string) ([]runtime.Object, error)
}

// readOnlyVerbs are the verbs of local resources.
var readOnlyVerbs = metav1.Verbs{"get", "list"}

// localGVRs are the resources some server answers as local, for verbsOf.
var localGVRs sync.Map // schema.GroupVersionResource → bool

// localHandler serves one local resource.
type localHandler struct {
	h   *resourceHandler
	res LocalResource
}

// addLocal registers local resources with the server and its discovery.
func (s *Server) addLocal(resources []LocalResource) error {
	s.local = map[schema.GroupVersionResource]*localHandler{}
	for _, lr := range resources {
		res := lr.Resource
		if res == nil || lr.Get == nil || lr.List == nil {
			return fmt.Errorf("api: a local resource needs a descriptor, Get and List")
		}
		gvr := res.GroupVersionResource()
		if _, dup := s.builtin.handlers[gvr]; dup {
			return fmt.Errorf("api: resource %s described twice", gvr)
		}
		if _, dup := s.createOnly[gvr]; dup {
			return fmt.Errorf("api: resource %s described twice", gvr)
		}
		if _, dup := s.local[gvr]; dup {
			return fmt.Errorf("api: resource %s described twice", gvr)
		}
		s.local[gvr] = &localHandler{h: newResourceHandler(s, res), res: lr}
		localGVRs.Store(gvr, true)
		t := s.builtin
		if _, seen := t.byGroupVersion[res.GroupVersion]; !seen {
			t.groupOrder = append(t.groupOrder, res.GroupVersion)
		}
		t.byGroupVersion[res.GroupVersion] = append(t.byGroupVersion[res.GroupVersion], res)
	}
	return nil
}

// serve answers a request for a local resource.
func (l *localHandler) serve(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	h := l.h
	res := h.res
	h.warnDeprecated(w)
	if !res.Namespaced && info.Namespace != "" {
		writeError(w, r, errNoResource())
		return
	}
	if info.Subresource != "" {
		writeError(w, r, errNoResource())
		return
	}
	switch info.Verb {
	case "get":
		o, err := negotiateFor(r, objectTransforms)
		if err != nil {
			writeError(w, r, err)
			return
		}
		obj, err := l.res.Get(r.Context(), info.Namespace, info.Name)
		if err != nil {
			writeError(w, r, err)
			return
		}
		h.writeResult(w, r, o, http.StatusOK, obj)
	case "list":
		l.serveList(w, r, info)
	default:
		writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), verbOrMethod(info, r)))
	}
}

func (l *localHandler) serveList(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	h := l.h
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
	all, err := l.res.List(r.Context(), info.Namespace)
	if err != nil {
		writeError(w, r, err)
		return
	}
	items := make([]runtime.Object, 0, len(all))
	for _, obj := range all {
		if h.matches(sel, obj) {
			items = append(items, obj)
		}
	}
	items, lm, err := pageLocal(r, items)
	if err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case o.table != nil:
		table, err := h.toTable(r, items, lm)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeObject(w, o, http.StatusOK, *o.table, table)
	case o.partial != nil:
		list := &metav1.PartialObjectMetadataList{ListMeta: lm, Items: make([]metav1.PartialObjectMetadata, 0, len(items))}
		for _, obj := range items {
			if p, ok := partialOf(obj).(*metav1.PartialObjectMetadata); ok {
				list.Items = append(list.Items, *p)
			}
		}
		writeObject(w, o, http.StatusOK, *o.partial, list)
	default:
		list := h.codec.NewList()
		if err := meta.SetList(list, items); err != nil {
			writeError(w, r, apierrors.NewInternalError(err))
			return
		}
		if la, err := meta.ListAccessor(list); err == nil {
			la.SetContinue(lm.Continue)
		}
		writeObject(w, o, http.StatusOK, h.res.GroupVersion, list)
	}
}

// pageLocal cuts a local list at the request's limit, as a stored list
// is cut: the continue token names the last object returned (its
// namespace and name, base64), and the next page starts after it in
// namespace/name order. Local objects are computed, not stored, so there
// is no resourceVersion to keep a list consistent across pages.
func pageLocal(r *http.Request, items []runtime.Object) ([]runtime.Object, metav1.ListMeta, error) {
	var lm metav1.ListMeta
	q := r.URL.Query()
	limit, _ := strconv.ParseInt(q.Get("limit"), 10, 64)
	token := q.Get("continue")
	if limit <= 0 && token == "" {
		return items, lm, nil
	}
	keyOf := func(obj runtime.Object) string {
		m, err := meta.Accessor(obj)
		if err != nil {
			return ""
		}
		return m.GetNamespace() + "/" + m.GetName()
	}
	sort.SliceStable(items, func(i, j int) bool { return keyOf(items[i]) < keyOf(items[j]) })
	if token != "" {
		after, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || !strings.Contains(string(after), "/") {
			return nil, lm, apierrors.NewBadRequest("continue key is not valid: invalid continue token")
		}
		i := sort.Search(len(items), func(i int) bool { return keyOf(items[i]) > string(after) })
		items = items[i:]
	}
	if limit > 0 && int64(len(items)) > limit {
		items = items[:limit]
		lm.Continue = base64.RawURLEncoding.EncodeToString([]byte(keyOf(items[len(items)-1])))
	}
	return items, lm, nil
}
