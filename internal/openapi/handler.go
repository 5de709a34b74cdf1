// Package openapi serves the OpenAPI documents of the API server, as
// kube-apiserver does: the v3 index at /openapi/v3, one OpenAPI 3.0 document
// per group version at /openapi/v3/apis/<group>/<version> (and api/v1,
// api, apis, apis/<group>, version), and the Swagger 2.0 document of
// everything at /openapi/v2.
//
// The documents are generated from the k8s.io/api Go types by reflection and
// from the resource descriptors of internal/registry; nothing is hand-written.
// Custom resources are described from their CustomResourceDefinitions'
// schemas, as the API server is told them (SetCustomResources): one v3
// document per group version, and their paths and models in v2.
// kubectl depends on them: apply builds strategic merge patches from the
// x-kubernetes-patch-* extensions, --validate=strict checks that the PATCH
// operation of a kind takes the fieldValidation parameter, and explain reads
// the models and their descriptions.
package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"minik/internal/registry"
)

// Paths the handler serves; mount the handler on both.
const (
	// V2Path is the Swagger 2.0 document of every group version.
	V2Path = "/openapi/v2"
	// V3Path is the v3 index; the documents it lists are under V3Path + "/".
	V3Path = "/openapi/v3"
)

// Media types of the documents. The protobuf forms are gnostic's
// openapi_v2.Document and openapi_v3.Document; kube accepts an older
// spelling of each ("@v1.0") and answers with the newer one.
const (
	mediaJSON      = "application/json"
	mediaV2Proto   = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	mediaV2ProtoAt = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	mediaV3Proto   = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	mediaV3ProtoAt = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// Handler serves the OpenAPI documents of a set of resources and of the
// custom resources it is told (SetCustomResources). It builds the documents
// of the built-in resources on first request, once (the v3 documents
// together, the v2 document apart); those of the custom resources, the v3
// index and the v2 document are rebuilt on the first request after the
// custom resources change. Between builds it serves the cached bytes; it is
// safe for concurrent use. Building only fails on a Go type it cannot
// describe, a programming error: such a failure is kept and answered with
// 500 on every request.
type Handler struct {
	resources []*registry.Resource
	types     *runtime.Scheme
	facts     func() (*typeFacts, error)
	// builtinGVs are the v3 document keys of the built-in group versions
	// ("api/v1", "apis/apps/v1"): a custom resource there is not described.
	builtinGVs map[string]bool

	builtinV3 func() (*v3Documents, error)
	builtinV2 func() (*spec.Swagger, error)

	// mu orders SetCustomResources; requests read current without it.
	mu      sync.Mutex
	current atomic.Pointer[documents]
}

// documents are the documents served for one set of custom resources,
// each built on first request.
type documents struct {
	// fingerprint identifies what of the custom resources the documents show.
	fingerprint string
	v3          func() (*v3Documents, error)
	v2          func() (*document, error)
}

// v3Documents are v3 documents by index key ("api/v1", "apis/apps/v1") and
// their index.
type v3Documents struct {
	index *document
	docs  map[string]*document
}

// NewHandler returns a Handler describing resources, whose Go types are
// registered in types (the API server's scheme). It checks that every
// resource's kind and list kind are known there; the documents themselves
// are built on first request.
func NewHandler(resources []*registry.Resource, types *runtime.Scheme) (*Handler, error) {
	if len(resources) == 0 {
		return nil, fmt.Errorf("openapi: no resources to describe")
	}
	builtinGVs := map[string]bool{}
	for _, r := range resources {
		for _, kind := range []string{r.Kind, r.Kind + "List"} {
			if !types.Recognizes(r.GroupVersion.WithKind(kind)) {
				return nil, fmt.Errorf("openapi: resource %s: kind %s is not in the API scheme", r.GroupResource(), r.GroupVersion.WithKind(kind))
			}
		}
		prefix, _, _ := gvNames(r.GroupVersion)
		builtinGVs[strings.TrimPrefix(prefix, "/")] = true
	}
	h := &Handler{
		resources:  append([]*registry.Resource(nil), resources...),
		types:      types,
		facts:      sync.OnceValues(func() (*typeFacts, error) { return newTypeFacts(types) }),
		builtinGVs: builtinGVs,
	}
	h.builtinV3 = sync.OnceValues(h.buildBuiltinV3)
	h.builtinV2 = sync.OnceValues(h.buildBuiltinV2)
	h.current.Store(h.newDocuments(nil, ""))
	return h, nil
}

// SetCustomResources makes the handler describe crs, the served versions of
// the Established custom resources (api.CustomResourceObserver), beside the
// built-in resources. It does not block on building: the documents are
// rebuilt on the next request, and only if what they show has changed (not
// on a change of a definition's status alone).
func (h *Handler) SetCustomResources(crs []*registry.CustomResource) {
	fp := fingerprint(crs)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.current.Load().fingerprint == fp {
		return
	}
	h.current.Store(h.newDocuments(append([]*registry.CustomResource(nil), crs...), fp))
}

// fingerprint identifies what the documents show of crs: each definition
// by UID and generation (its spec), with the names it is served under.
func fingerprint(crs []*registry.CustomResource) string {
	var b strings.Builder
	for _, cr := range crs {
		n := namesOf(cr)
		fmt.Fprintf(&b, "%s/%d/%s/%s/%s/%s;", cr.CRD.UID, cr.CRD.Generation, n.gv, n.plural, n.kind, n.listKind)
	}
	return b.String()
}

func (h *Handler) newDocuments(crs []*registry.CustomResource, fp string) *documents {
	var secs []section
	for _, sec := range customSections(crs) {
		if !h.builtinGVs[sec.name] {
			secs = append(secs, sec)
		}
	}
	return &documents{
		fingerprint: fp,
		v3:          sync.OnceValues(func() (*v3Documents, error) { return h.buildV3(secs) }),
		v2:          sync.OnceValues(func() (*document, error) { return h.buildV2(secs) }),
	}
}

// ServeHTTP answers GET and HEAD for V2Path, V3Path and the documents
// under V3Path, with kube's headers: an ETag (the SHA-512 of the JSON
// document), Vary: Accept where the media type is negotiated, and, when a
// v3 document is asked for with the ?hash= the index gave, immutable
// caching; an outdated hash is redirected to the current one.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch p := r.URL.Path; {
	case p == V2Path:
		h.serveV2(w, r)
	case p == V3Path || p == V3Path+"/":
		h.serveV3Index(w, r)
	case strings.HasPrefix(p, V3Path+"/"):
		h.serveV3(w, r, strings.TrimPrefix(p, V3Path+"/"))
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) serveV2(w http.ResponseWriter, r *http.Request) {
	doc, err := h.current.Load().v2()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Add("Vary", "Accept")
	doc.serve(w, r, []format{
		{mediaJSON, mediaJSON, false},
		{mediaV2ProtoAt, mediaV2Proto, true},
		{mediaV2Proto, mediaV2Proto, true},
	})
}

func (h *Handler) serveV3Index(w http.ResponseWriter, r *http.Request) {
	v3, ok := h.v3(w)
	if !ok {
		return
	}
	w.Header().Set("Etag", strconv.Quote(v3.index.etag))
	w.Header().Set("Content-Type", mediaJSON)
	http.ServeContent(w, r, V3Path, v3.index.modified, bytes.NewReader(v3.index.json))
}

func (h *Handler) serveV3(w http.ResponseWriter, r *http.Request, key string) {
	v3, ok := h.v3(w)
	if !ok {
		return
	}
	doc, ok := v3.docs[key]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Add("Vary", "Accept")
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.etag {
			http.Redirect(w, r, serverRelativeURL(key, doc.etag), http.StatusMovedPermanently)
			return
		}
		// The URL names this exact content: let every cache keep it.
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
	}
	doc.serve(w, r, []format{
		{mediaJSON, mediaJSON, false},
		{mediaV3Proto, mediaV3Proto, true},
		{mediaV3ProtoAt, mediaV3Proto, true},
	})
}

// v3 returns the current v3 documents, building them on first use; on
// failure it answers 500 and returns false.
func (h *Handler) v3(w http.ResponseWriter) (*v3Documents, bool) {
	v3, err := h.current.Load().v3()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, false
	}
	return v3, true
}

// index is the v3 discovery document (k8s.io/kube-openapi/pkg/handler3's
// OpenAPIV3Discovery): each document's key and its URL, which carries the
// document's hash so that clients may cache it forever.
type index struct {
	Paths map[string]indexEntry `json:"paths"`
}

type indexEntry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// buildBuiltinV3 builds the v3 documents of the built-in resources.
func (h *Handler) buildBuiltinV3() (*v3Documents, error) {
	facts, err := h.facts()
	if err != nil {
		return nil, fmt.Errorf("openapi v3: %w", err)
	}
	secs, err := sections(h.resources, h.types)
	if err != nil {
		return nil, fmt.Errorf("openapi v3: %w", err)
	}
	return buildV3Documents(secs, facts, map[string]*document{})
}

// buildV3 adds the documents of the custom resource sections secs to the
// built-in ones, and indexes them all.
func (h *Handler) buildV3(secs []section) (*v3Documents, error) {
	builtin, err := h.builtinV3()
	if err != nil {
		return nil, err
	}
	if len(secs) == 0 {
		return builtin, nil
	}
	facts, err := h.facts()
	if err != nil {
		return nil, fmt.Errorf("openapi v3: %w", err)
	}
	return buildV3Documents(secs, facts, maps.Clone(builtin.docs))
}

// buildV3Documents adds the documents of secs to docs and indexes docs.
func buildV3Documents(secs []section, facts *typeFacts, docs map[string]*document) (*v3Documents, error) {
	for _, sec := range secs {
		oa, err := buildV3(sec, facts)
		if err != nil {
			return nil, fmt.Errorf("openapi v3 %s: %w", sec.name, err)
		}
		doc, err := newDocument(oa, func(b []byte) (proto.Message, error) { return openapiv3.ParseDocument(b) })
		if err != nil {
			return nil, fmt.Errorf("openapi v3 %s: %w", sec.name, err)
		}
		docs[sec.name] = doc
	}
	idx := index{Paths: map[string]indexEntry{}}
	for name, doc := range docs {
		idx.Paths[name] = indexEntry{ServerRelativeURL: serverRelativeURL(name, doc.etag)}
	}
	idxDoc, err := newDocument(idx, nil)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 index: %w", err)
	}
	return &v3Documents{index: idxDoc, docs: docs}, nil
}

// buildBuiltinV2 builds the v2 document of the built-in resources.
func (h *Handler) buildBuiltinV2() (*spec.Swagger, error) {
	facts, err := h.facts()
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	secs, err := sections(h.resources, h.types)
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	sw, err := buildV2(secs, facts)
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	return sw, nil
}

// buildV2 renders the v2 document of the built-in resources and of the
// custom resource sections secs.
func (h *Handler) buildV2(secs []section) (*document, error) {
	builtin, err := h.builtinV2()
	if err != nil {
		return nil, err
	}
	facts, err := h.facts()
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	sw, err := mergeV2(builtin, secs, facts)
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	doc, err := newDocument(sw, func(b []byte) (proto.Message, error) { return openapiv2.ParseDocument(b) })
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	return doc, nil
}

func serverRelativeURL(key, etag string) string {
	u := url.URL{Path: path.Join(V3Path, key), RawQuery: url.Values{"hash": {etag}}.Encode()}
	return u.String()
}

// document is one served document: its JSON, identified by the SHA-512 of
// that JSON, and, built on first request, its protobuf form.
type document struct {
	json     []byte
	etag     string
	modified time.Time

	toProto   func([]byte) (proto.Message, error)
	protoOnce sync.Once
	proto     []byte
	protoErr  error
}

func newDocument(v interface{}, toProto func([]byte) (proto.Message, error)) (*document, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode document: %w", err)
	}
	return &document{json: b, etag: fmt.Sprintf("%X", sha512.Sum512(b)), modified: time.Now(), toProto: toProto}, nil
}

func (d *document) protobuf() ([]byte, error) {
	d.protoOnce.Do(func() {
		m, err := d.toProto(d.json)
		if err != nil {
			d.protoErr = fmt.Errorf("convert document to protobuf: %w", err)
			return
		}
		d.proto, d.protoErr = proto.Marshal(m)
	})
	return d.proto, d.protoErr
}

// format is a media type a document may be asked for, the media type it is
// then answered with, and whether that is the protobuf form.
type format struct {
	accept, contentType string
	protobuf            bool
}

// serve answers with the first of formats the Accept header allows, in the
// client's order of preference, or 406.
func (d *document) serve(w http.ResponseWriter, r *http.Request, formats []format) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, f := range formats {
			typ, sub, _ := strings.Cut(f.accept, "/")
			if (clause.Type != typ && clause.Type != "*") || (clause.SubType != sub && clause.SubType != "*") {
				continue
			}
			body := d.json
			if f.protobuf {
				var err error
				if body, err = d.protobuf(); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}
			w.Header().Set("Content-Type", f.contentType)
			w.Header().Set("Etag", strconv.Quote(d.etag))
			http.ServeContent(w, r, "", d.modified, bytes.NewReader(body))
			return
		}
	}
	http.Error(w, "none of the accepted media types is served", http.StatusNotAcceptable)
}
