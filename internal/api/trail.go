package api

import (
	"bytes"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"minik/internal/auth"
)

// The trail stage sits beside the audit stage: every request that asks to
// change an object (create, update, patch, delete, deletecollection of a
// resource or subresource; not dry runs) is handed, once its response has
// been written, to Config.Trail as a WriteRecord carrying who asked, what,
// the response code and the object the server answered with (the stored
// object, or the Status of a failure). The sink (internal/trail) keeps and
// serves them; this stage only observes. Its cost is a copy of the
// response body, capped at maxTrailBody, and, unless the handler handed
// over the object it encoded (noteResponseObject), one decode of it.

// TrailSink receives the writes the API server answered.
type TrailSink interface {
	// Observe is called once per write, after its response, on the
	// request's goroutine; it must not block.
	Observe(rec *WriteRecord)
}

// TrailWatchSink is a TrailSink that is also told of watch deliveries:
// which identity's watch was sent the change of resourceVersion, when.
type TrailWatchSink interface {
	TrailSink
	// Delivered is called on the watch's goroutine once the event is
	// written to the watcher; it must not block.
	Delivered(user string, resourceVersion int64, at time.Time)
}

// trailDelivered tells the sink, if it wants to know, that the change of
// revision rev was sent to the watch of r.
func (h *resourceHandler) trailDelivered(r *http.Request, rev int64) {
	ws, ok := h.s.cfg.Trail.(TrailWatchSink)
	if !ok {
		return
	}
	name := ""
	if u := auth.UserFrom(r.Context()); u != nil {
		name = u.Name
	}
	ws.Delivered(name, rev, h.s.clock.Now())
}

// WriteRecord is one request that asked to change an object.
type WriteRecord struct {
	// User is whom the request acted as (after impersonation); nil when
	// authentication failed.
	User *auth.User
	// UserAgent is the client's User-Agent header.
	UserAgent string
	// Verb, APIGroup, APIVersion, Resource, Subresource, Namespace and
	// Name are the request's (Name is empty for a create).
	Verb, APIGroup, APIVersion, Resource, Subresource, Namespace, Name string
	// FieldManager is the request's fieldManager parameter, if any.
	FieldManager string
	// Code is the response's status code.
	Code int
	// Received is when the request arrived.
	Received time.Time
	// Object is the response body decoded: the object as stored (typed, or
	// unstructured for custom resources), a *metav1.Status, or nil when the
	// body could not be decoded or was larger than maxTrailBody. It may be
	// the very object the handler encoded: the sink must not change it.
	Object runtime.Object
}

// maxTrailBody bounds the response bytes kept for the trail.
const maxTrailBody = 4 << 20

// trailVerbs are the verbs that change objects.
var trailVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// trailWriter captures the response of one write.
type trailWriter struct {
	http.ResponseWriter
	sink TrailSink
	rec  WriteRecord
	body bytes.Buffer
	over bool
	// ex is what the handler tells of the object it answered with.
	ex *exchange
}

// trailBegin starts observing a request; nil when it is not a write or
// there is no sink.
func (s *Server) trailBegin(w http.ResponseWriter, r *http.Request, info *RequestInfo, start time.Time) *trailWriter {
	if s.cfg.Trail == nil || !info.IsResourceRequest || !trailVerbs[info.Verb] {
		return nil
	}
	q := r.URL.Query()
	if len(q["dryRun"]) > 0 {
		return nil
	}
	return &trailWriter{ResponseWriter: w, sink: s.cfg.Trail, rec: WriteRecord{
		UserAgent: r.UserAgent(), Verb: info.Verb,
		APIGroup: info.APIGroup, APIVersion: info.APIVersion, Resource: info.Resource,
		Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name,
		FieldManager: q.Get("fieldManager"), Received: start, Code: http.StatusOK,
	}}
}

// identify records whom the request acts as.
func (t *trailWriter) identify(u *auth.User) {
	if t != nil {
		t.rec.User = u
	}
}

func (t *trailWriter) WriteHeader(code int) {
	t.rec.Code = code
	t.ResponseWriter.WriteHeader(code)
}

func (t *trailWriter) Write(b []byte) (int, error) {
	if !t.over {
		if t.body.Len()+len(b) > maxTrailBody {
			t.over = true
			t.body = bytes.Buffer{}
		} else {
			t.body.Write(b)
		}
	}
	return t.ResponseWriter.Write(b)
}

// Flush lets what was written through.
func (t *trailWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (t *trailWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// end decodes the response and hands the record to the sink.
func (t *trailWriter) end() {
	if t == nil {
		return
	}
	var answered *runtime.Object
	if t.ex != nil {
		answered = t.ex.response.Load()
	}
	if answered != nil && t.rec.Code < http.StatusMultipleChoices {
		// The handler's own object: what the body was encoded from.
		t.rec.Object = *answered
	} else if !t.over && t.body.Len() > 0 {
		body := t.body.Bytes()
		if obj, _, err := Codecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
			t.rec.Object = obj
		} else if u, _, err := unstructured.UnstructuredJSONScheme.Decode(body, nil, nil); err == nil {
			t.rec.Object = u
		}
	}
	t.sink.Observe(&t.rec)
}
