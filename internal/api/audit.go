package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	auditvalidation "k8s.io/apiserver/pkg/apis/audit/validation"
	kubeaudit "k8s.io/apiserver/pkg/audit"
	auditpolicy "k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"sigs.k8s.io/yaml"

	"minik/internal/auth"
	"minik/internal/registry"
)

// Audit is a stage of the handler chain: every request ends in one
// audit.k8s.io/v1 Event at stage ResponseComplete (who, what, the
// response code, when; the request and response bodies at the levels that
// ask for them), written as a JSON line. Which requests are recorded, and
// how much of them, is a kube audit Policy; without one every request is
// recorded at Metadata. Secrets, TokenRequests and TokenReviews are never
// recorded beyond Metadata, whatever the policy says: their bodies are
// credentials.
//
// The event and policy types are k8s.io/apiserver's audit.k8s.io/v1 types,
// and a policy is evaluated by k8s.io/apiserver's policy rule evaluator,
// as in kube-apiserver (ARCHITECTURE.md welcomes its audit types; minik
// does not take its generic server nor its audit handler).

// AuditEvent is an audit.k8s.io/v1 Event.
type AuditEvent = auditv1.Event

// AuditObjectReference is the object a request is about.
type AuditObjectReference = auditv1.ObjectReference

// AuditLevel is how much of a request is recorded.
type AuditLevel = auditv1.Level

// The audit levels, from nothing to everything.
const (
	AuditNone            = auditv1.LevelNone
	AuditMetadata        = auditv1.LevelMetadata
	AuditRequest         = auditv1.LevelRequest
	AuditRequestResponse = auditv1.LevelRequestResponse
)

// atLeast tells whether level l records at least as much as floor.
func atLeast(l, floor AuditLevel) bool {
	return auditinternal.Level(l).GreaterOrEqual(auditinternal.Level(floor))
}

// StageResponseComplete is the stage of every recorded event but those of
// requests that panicked.
const StageResponseComplete = auditv1.StageResponseComplete

// StagePanic is the stage of the event of a request whose handler
// panicked.
const StagePanic = auditv1.StagePanic

// AuditPolicy is a loaded audit.k8s.io/v1 Policy: the first rule that
// matches a request decides its level and omitted stages.
type AuditPolicy struct {
	eval kubeaudit.PolicyRuleEvaluator
}

// Audit annotations minik records.
const (
	AuditDecisionAnnotation = "authorization.k8s.io/decision"
	AuditReasonAnnotation   = "authorization.k8s.io/reason"
	// AuditLatencyAnnotation is the time from the request's arrival to
	// the end of its response (stageTimestamp minus
	// requestReceivedTimestamp, in Go's duration format).
	AuditLatencyAnnotation = "minik.io/latency"
)

var auditTypeMeta = metav1.TypeMeta{APIVersion: auditv1.SchemeGroupVersion.String(), Kind: "Event"}

// DefaultAuditPolicy records every request at Metadata.
func DefaultAuditPolicy() *AuditPolicy {
	p, err := newAuditPolicy(&auditv1.Policy{Rules: []auditv1.PolicyRule{{Level: AuditMetadata}}})
	if err != nil {
		panic(err) // a constant policy
	}
	return p
}

// LoadAuditPolicy reads an audit.k8s.io/v1 Policy from a YAML or JSON file.
func LoadAuditPolicy(path string) (*AuditPolicy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--audit-policy: %w", err)
	}
	p, err := ParseAuditPolicy(data)
	if err != nil {
		return nil, fmt.Errorf("--audit-policy %s: %w", path, err)
	}
	return p, nil
}

// ParseAuditPolicy decodes and validates an audit Policy. Unlike
// kube-apiserver, which falls back to lenient decoding with a warning, an
// unknown field is an error.
func ParseAuditPolicy(data []byte) (*AuditPolicy, error) {
	var p auditv1.Policy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, err
	}
	if p.APIVersion != auditv1.SchemeGroupVersion.String() || p.Kind != "Policy" {
		return nil, fmt.Errorf("not an audit.k8s.io/v1 Policy (apiVersion %q, kind %q)", p.APIVersion, p.Kind)
	}
	return newAuditPolicy(&p)
}

// newAuditPolicy validates a policy and builds its evaluator.
func newAuditPolicy(p *auditv1.Policy) (*AuditPolicy, error) {
	var internal auditinternal.Policy
	if err := auditv1.Convert_v1_Policy_To_audit_Policy(p, &internal, nil); err != nil {
		return nil, fmt.Errorf("convert audit policy: %w", err)
	}
	if errs := auditvalidation.ValidatePolicy(&internal); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &AuditPolicy{eval: auditpolicy.NewPolicyRuleEvaluator(&internal)}, nil
}

// levelFor is the level a request is recorded at, and whether stage is
// omitted for it.
func (p *AuditPolicy) levelFor(u *auth.User, info *RequestInfo, stage auditv1.Stage) (AuditLevel, bool) {
	attrs := authorizer.AttributesRecord{
		User: u.Info(), Verb: info.Verb, ResourceRequest: info.IsResourceRequest, Path: info.Path,
		APIGroup: info.APIGroup, APIVersion: info.APIVersion, Namespace: info.Namespace,
		Resource: info.Resource, Subresource: info.Subresource, Name: info.Name,
	}
	cfg := p.eval.EvaluatePolicyRule(attrs)
	return AuditLevel(cfg.Level), slices.Contains(cfg.OmitStages, auditinternal.Stage(stage))
}

// secretBearing tells whether a request's bodies carry credentials, as
// its resource's or subresource's descriptor says.
func (s *Server) secretBearing(info *RequestInfo) bool {
	if !info.IsResourceRequest {
		return false
	}
	gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
	var res *registry.Resource
	if h := s.handler(gvr); h != nil {
		res = h.res
	} else if c, ok := s.createOnly[gvr]; ok {
		res = c.h.res
	}
	if res == nil {
		return false
	}
	if info.Subresource != "" {
		sr := res.Subresource(info.Subresource)
		return sr != nil && sr.SecretBearing
	}
	return res.SecretBearing
}

// Auditor writes audit events as JSON lines, in the background: requests
// hand their event over and go on; a burst larger than the buffer waits
// (kube's "blocking" mode), so no event is dropped. Events reach the file
// within 50ms; Close flushes.
type Auditor struct {
	policy *AuditPolicy
	out    *bufio.Writer
	log    *slog.Logger
	events chan *AuditEvent
	done   chan struct{}

	mu     sync.RWMutex
	closed bool
}

// NewAuditor starts an auditor writing to w with policy (nil: record
// everything at Metadata).
func NewAuditor(w io.Writer, policy *AuditPolicy, log *slog.Logger) *Auditor {
	if policy == nil {
		policy = DefaultAuditPolicy()
	}
	if log == nil {
		log = slog.Default()
	}
	a := &Auditor{policy: policy, out: bufio.NewWriterSize(w, 64<<10), log: log, events: make(chan *AuditEvent, 4096), done: make(chan struct{})}
	go a.write()
	return a
}

// auditFlushInterval bounds how long an event waits in the buffer.
const auditFlushInterval = 50 * time.Millisecond

func (a *Auditor) write() {
	defer close(a.done)
	tick := time.NewTicker(auditFlushInterval)
	defer tick.Stop()
	failed, dirty := false, false
	report := func(err error) {
		if err != nil && !failed {
			failed = true
			a.log.Error("audit log write failed", "err", err)
		}
	}
	for {
		select {
		case ev, ok := <-a.events:
			if !ok {
				report(a.out.Flush())
				return
			}
			data, err := json.Marshal(ev)
			if err == nil {
				data = append(data, '\n')
				// Flush at an event's boundary, never inside one: a reader
				// (tail -f, a test) then only ever sees whole lines.
				if a.out.Buffered() > 0 && a.out.Available() < len(data) {
					err = a.out.Flush()
				}
				if err == nil {
					_, err = a.out.Write(data)
				}
			}
			report(err)
			dirty = true
		case <-tick.C:
			if dirty {
				report(a.out.Flush())
				dirty = false
			}
		}
	}
}

func (a *Auditor) record(ev *AuditEvent) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if !a.closed {
		a.events <- ev
	}
}

// Close records nothing more and returns once every event is written. It
// is safe to call more than once.
func (a *Auditor) Close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.events)
	}
	a.mu.Unlock()
	<-a.done
}

// auditRecord follows one request through the chain; it is the
// ResponseWriter the rest of the chain writes to.
type auditRecord struct {
	http.ResponseWriter
	a     *Auditor
	r     *http.Request
	info  *RequestInfo
	start time.Time
	now   func() time.Time

	id         types.UID
	user       *auth.User
	acting     *auth.User // whom user impersonates, if anyone
	level      AuditLevel
	omit       bool
	annotation map[string]string
	// secretBearing is set when the request's bodies carry credentials
	// (its descriptor says so): they are never recorded.
	secretBearing bool

	reqBody *cappedBuffer
	// ex is what the handler tells of the objects it decoded and wrote.
	ex       *exchange
	code     int
	respBody *cappedBuffer
	wrote    bool
	// panic is what the handler panicked with; nil if it did not.
	panic any
}

// auditBegin starts recording a request; nil when nothing is audited.
func (s *Server) auditBegin(w http.ResponseWriter, r *http.Request, info *RequestInfo, start time.Time) *auditRecord {
	if s.cfg.Audit == nil {
		return nil
	}
	id := types.UID(r.Header.Get("Audit-ID"))
	if id == "" {
		id = uuid.NewUUID()
	}
	w.Header().Set("Audit-Id", string(id))
	return &auditRecord{ResponseWriter: w, a: s.cfg.Audit, r: r, info: info, start: start, now: s.clock.Now, id: id, secretBearing: s.secretBearing(info)}
}

// authenticated decides the level, now that the user is known, and starts
// capturing the request body where the level or the object reference
// needs it.
func (rec *auditRecord) authenticated(u *auth.User) {
	if rec == nil {
		return
	}
	rec.user = u
	rec.level, rec.omit = rec.a.policy.levelFor(u, rec.info, StageResponseComplete)
	if rec.secretBearing && !atLeast(AuditMetadata, rec.level) {
		rec.level = AuditMetadata
	}
	if rec.level == AuditNone || rec.omit || rec.r.Body == nil {
		return
	}
	switch rec.info.Verb {
	case "create", "update", "patch":
		rec.reqBody = &cappedBuffer{limit: maxBodyBytes}
		rec.r.Body = &teeBody{ReadCloser: rec.r.Body, buf: rec.reqBody}
	}
}

// impersonated records who the request acts as; the policy level stays
// the one the requester's identity decided, as in kube.
func (rec *auditRecord) impersonated(u *auth.User) {
	if rec != nil {
		rec.acting = u
	}
}

// authorized records the authorization decision.
func (rec *auditRecord) authorized(allowed bool, reason string) {
	if rec == nil {
		return
	}
	rec.annotation = map[string]string{AuditDecisionAnnotation: "forbid"}
	if allowed {
		rec.annotation[AuditDecisionAnnotation] = "allow"
	}
	if reason != "" {
		rec.annotation[AuditReasonAnnotation] = reason
	}
}

func (rec *auditRecord) WriteHeader(code int) {
	if !rec.wrote {
		rec.wrote = true
		rec.code = code
		// Streams (watches, logs) are not objects: only their errors are kept.
		stream := rec.info.Verb == "watch" || rec.info.Subresource == "log"
		if (rec.level == AuditRequestResponse && !stream) || code >= 400 {
			rec.respBody = &cappedBuffer{limit: maxBodyBytes}
		}
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *auditRecord) Write(p []byte) (int, error) {
	if !rec.wrote {
		rec.WriteHeader(http.StatusOK)
	}
	if rec.respBody != nil {
		rec.respBody.Write(p)
	}
	return rec.ResponseWriter.Write(p)
}

// Flush lets watches and log streams flush through the record.
func (rec *auditRecord) Flush() {
	if f, ok := rec.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (rec *auditRecord) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// panicked records that the handler panicked with v: the event is then
// one of stage Panic, as kube's audit filter records it.
func (rec *auditRecord) panicked(v any) {
	if rec != nil {
		rec.panic = v
	}
}

// end builds the ResponseComplete (or Panic) event and hands it to the
// auditor.
func (rec *auditRecord) end() {
	if rec == nil {
		return
	}
	if rec.user == nil && rec.level == AuditNone && !rec.omit {
		// Authentication failed: the policy is asked with no user.
		rec.level, rec.omit = rec.a.policy.levelFor(nil, rec.info, StageResponseComplete)
	}
	stage := StageResponseComplete
	omit := rec.omit
	if rec.panic != nil {
		stage = StagePanic
		level, omitPanic := rec.a.policy.levelFor(rec.user, rec.info, StagePanic)
		omit = level == AuditNone || omitPanic
	}
	if rec.level == AuditNone || omit {
		return
	}
	stamp := rec.now()
	code := rec.code
	if code == 0 {
		code = http.StatusOK
	}
	ev := &AuditEvent{
		TypeMeta: auditTypeMeta, Level: rec.level, AuditID: rec.id, Stage: stage,
		RequestURI: rec.r.RequestURI, Verb: rec.info.Verb, User: registry.UserInfo(rec.user),
		SourceIPs: sourceIPs(rec.r), UserAgent: rec.r.UserAgent(),
		RequestReceivedTimestamp: metav1.NewMicroTime(rec.start), StageTimestamp: metav1.NewMicroTime(stamp),
		Annotations: rec.annotation,
	}
	if rec.acting != nil {
		acting := registry.UserInfo(rec.acting)
		ev.ImpersonatedUser = &acting
	}
	if ev.RequestURI == "" {
		ev.RequestURI = rec.r.URL.RequestURI()
	}
	if ev.Annotations == nil {
		ev.Annotations = map[string]string{}
	}
	ev.Annotations[AuditLatencyAnnotation] = stamp.Sub(rec.start).String()
	ev.ResponseStatus = &metav1.Status{Code: int32(code)}
	var resp json.RawMessage
	if rec.respBody != nil && !rec.respBody.overflow {
		obj, raw := auditBody(rec.respBody.Bytes(), rec.Header().Get("Content-Type"), rec.level == AuditRequestResponse)
		if st, ok := obj.(*metav1.Status); ok && code >= 400 {
			ev.ResponseStatus = &metav1.Status{Status: st.Status, Message: st.Message, Reason: st.Reason, Details: st.Details, Code: int32(code)}
		}
		resp = raw
	}
	if rec.panic != nil {
		ev.ResponseStatus = &metav1.Status{
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError, Code: http.StatusInternalServerError,
			Message: fmt.Sprintf("APIServer panic'd: %v", rec.panic),
		}
	}
	if rec.info.IsResourceRequest {
		ev.ObjectRef = &AuditObjectReference{
			Resource: rec.info.Resource, Namespace: rec.info.Namespace, Name: rec.info.Name,
			APIGroup: rec.info.APIGroup, APIVersion: rec.info.APIVersion, Subresource: rec.info.Subresource,
		}
	}
	var req json.RawMessage
	var noted *AuditObjectReference
	if rec.ex != nil {
		noted = rec.ex.request.Load()
	}
	if noted != nil && !atLeast(rec.level, AuditRequest) {
		// The handler decoded the body already: the reference is all
		// the Metadata level takes from it.
		completeObjectRef(ev.ObjectRef, noted)
	} else if body := rec.reqBody.contents(); body != nil {
		var obj runtime.Object
		obj, req = auditBody(body, rec.r.Header.Get("Content-Type"), atLeast(rec.level, AuditRequest))
		completeObjectRef(ev.ObjectRef, referenceOf(obj))
	}
	if atLeast(rec.level, AuditRequest) && req != nil {
		ev.RequestObject = &runtime.Unknown{Raw: req, ContentType: runtime.ContentTypeJSON}
	}
	if rec.level == AuditRequestResponse && resp != nil {
		ev.ResponseObject = &runtime.Unknown{Raw: resp, ContentType: runtime.ContentTypeJSON}
	}
	rec.a.record(ev)
}

// auditBody decodes a request or response body in whatever encoding it
// came (JSON, YAML, protobuf) and returns the object, when it is one the
// server knows, and, when wantJSON, its JSON, as kube's audit records
// objects in JSON. Patches and other JSON documents are returned as they
// are.
func auditBody(data []byte, contentType string, wantJSON bool) (runtime.Object, json.RawMessage) {
	if len(data) == 0 {
		return nil, nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" {
		mt = mediaJSON
	}
	info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mt)
	if !ok {
		if json.Valid(data) {
			return nil, json.RawMessage(data)
		}
		return nil, nil
	}
	obj, gvk, err := info.Serializer.Decode(data, nil, nil)
	if err != nil {
		if json.Valid(data) {
			return nil, json.RawMessage(data)
		}
		return nil, nil
	}
	if !wantJSON {
		return obj, nil
	}
	if mt == mediaJSON {
		return obj, json.RawMessage(data)
	}
	out, err := runtime.Encode(Codecs.LegacyCodec(gvk.GroupVersion()), obj)
	if err != nil {
		return obj, nil
	}
	return obj, json.RawMessage(bytes.TrimSpace(out))
}

// completeObjectRef fills the name, namespace, uid and resourceVersion
// the reference lacks from those of the object a request body holds (a
// create names its object there), as kube's audit does.
func completeObjectRef(ref, from *AuditObjectReference) {
	if ref == nil || from == nil {
		return
	}
	if ref.Name == "" {
		ref.Name = from.Name
	}
	if ref.Namespace == "" {
		ref.Namespace = from.Namespace
	}
	if ref.UID == "" {
		ref.UID = from.UID
	}
	if ref.ResourceVersion == "" {
		ref.ResourceVersion = from.ResourceVersion
	}
}

// referenceOf is the name, namespace, uid and resourceVersion of obj, or
// nil when it has no metadata.
func referenceOf(obj runtime.Object) *AuditObjectReference {
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return &AuditObjectReference{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion()}
}

func sourceIPs(r *http.Request) []string {
	var ips []string
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		for _, p := range strings.Split(xff, ",") {
			if ip := net.ParseIP(strings.TrimSpace(p)); ip != nil {
				ips = append(ips, ip.String())
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if host != "" && !slices.Contains(ips, host) {
		ips = append(ips, host)
	}
	return ips
}

// cappedBuffer keeps at most limit bytes, noting when more came. It may
// be written by a handler that still reads its body after its request
// timed out while the record ends: a mutex orders the two.
type cappedBuffer struct {
	mu sync.Mutex
	bytes.Buffer
	limit    int
	overflow bool
}

// contents returns the bytes kept, or nil after an overflow.
func (b *cappedBuffer) contents() []byte {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.overflow {
		return nil
	}
	return bytes.Clone(b.Bytes())
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.overflow {
		return len(p), nil
	}
	if b.Len()+len(p) > b.limit {
		b.overflow = true
		b.Reset()
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// teeBody copies what the handler reads from a request body.
type teeBody struct {
	io.ReadCloser
	buf *cappedBuffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.buf.Write(p[:n])
	}
	return n, err
}
