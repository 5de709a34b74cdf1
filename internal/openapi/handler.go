// Package openapi serves the OpenAPI documents of the API server, as
// kube-apiserver does: the v3 index at /openapi/v3, one OpenAPI 3.0 document
// per group version at /openapi/v3/apis/<group>/<version> (and api/v1,
// api, apis, apis/<group>, version), and the Swagger 2.0 document of
// everything at /openapi/v2.
//
// The documents are generated from the k8s.io/api Go types by reflection and
// from the resource descriptors of internal/registry; nothing is hand-written.
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
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime"

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

// Handler serves the OpenAPI documents of a set of resources. It builds
// them on first request, once (the v3 documents together, the v2 document
// apart), and then serves the cached bytes; it is safe for concurrent use.
// Building only fails on a Go type it cannot describe, a programming error:
// such a failure is kept and answered with 500 on every request.
type Handler struct {
	resources []*registry.Resource
	types     *runtime.Scheme
	facts     func() (*typeFacts, error)

	v3Once  sync.Once
	v3Index *document
	v3Docs  map[string]*document // by index key: "api/v1", "apis/apps/v1"
	v3Err   error

	v2Once sync.Once
	v2Doc  *document
	v2Err  error
}

// NewHandler returns a Handler describing resources, whose Go types are
// registered in types (the API server's scheme). It checks that every
// resource's kind and list kind are known there; the documents themselves
// are built on first request.
func NewHandler(resources []*registry.Resource, types *runtime.Scheme) (*Handler, error) {
	if len(resources) == 0 {
		return nil, fmt.Errorf("openapi: no resources to describe")
	}
	for _, r := range resources {
		for _, kind := range []string{r.Kind, r.Kind + "List"} {
			if !types.Recognizes(r.GroupVersion.WithKind(kind)) {
				return nil, fmt.Errorf("openapi: resource %s: kind %s is not in the API scheme", r.GroupResource(), r.GroupVersion.WithKind(kind))
			}
		}
	}
	return &Handler{
		resources: append([]*registry.Resource(nil), resources...),
		types:     types,
		facts:     sync.OnceValues(func() (*typeFacts, error) { return newTypeFacts(types) }),
	}, nil
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
	h.v2Once.Do(func() { h.v2Doc, h.v2Err = h.buildV2() })
	if h.v2Err != nil {
		http.Error(w, h.v2Err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Add("Vary", "Accept")
	h.v2Doc.serve(w, r, []format{
		{mediaJSON, mediaJSON, false},
		{mediaV2ProtoAt, mediaV2Proto, true},
		{mediaV2Proto, mediaV2Proto, true},
	})
}

func (h *Handler) serveV3Index(w http.ResponseWriter, r *http.Request) {
	if !h.buildV3Once(w) {
		return
	}
	w.Header().Set("Etag", strconv.Quote(h.v3Index.etag))
	w.Header().Set("Content-Type", mediaJSON)
	http.ServeContent(w, r, V3Path, h.v3Index.modified, bytes.NewReader(h.v3Index.json))
}

func (h *Handler) serveV3(w http.ResponseWriter, r *http.Request, key string) {
	if !h.buildV3Once(w) {
		return
	}
	doc, ok := h.v3Docs[key]
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

// buildV3Once builds the v3 documents and their index on first use; on
// failure it answers 500 and returns false.
func (h *Handler) buildV3Once(w http.ResponseWriter) bool {
	h.v3Once.Do(func() { h.v3Err = h.buildV3() })
	if h.v3Err != nil {
		http.Error(w, h.v3Err.Error(), http.StatusInternalServerError)
		return false
	}
	return true
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

func (h *Handler) buildV3() error {
	facts, err := h.facts()
	if err != nil {
		return fmt.Errorf("openapi v3: %w", err)
	}
	secs, err := sections(h.resources, h.types)
	if err != nil {
		return fmt.Errorf("openapi v3: %w", err)
	}
	h.v3Docs = map[string]*document{}
	idx := index{Paths: map[string]indexEntry{}}
	for _, sec := range secs {
		spec, err := buildV3(sec, facts)
		if err != nil {
			return fmt.Errorf("openapi v3 %s: %w", sec.name, err)
		}
		doc, err := newDocument(spec, func(b []byte) (proto.Message, error) { return openapiv3.ParseDocument(b) })
		if err != nil {
			return fmt.Errorf("openapi v3 %s: %w", sec.name, err)
		}
		h.v3Docs[sec.name] = doc
		idx.Paths[sec.name] = indexEntry{ServerRelativeURL: serverRelativeURL(sec.name, doc.etag)}
	}
	h.v3Index, err = newDocument(idx, nil)
	return err
}

func (h *Handler) buildV2() (*document, error) {
	facts, err := h.facts()
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	secs, err := sections(h.resources, h.types)
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	spec, err := buildV2(secs, facts)
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	doc, err := newDocument(spec, func(b []byte) (proto.Message, error) { return openapiv2.ParseDocument(b) })
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
