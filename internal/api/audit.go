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

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/yaml"

	"minik/internal/auth"
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
// The types below mirror audit.k8s.io/v1's wire format field for field;
// they are declared here because the Go types live in k8s.io/apiserver,
// which minik does not depend on (see ARCHITECTURE.md).

// AuditLevel is how much of a request is recorded.
type AuditLevel string

// The audit levels, from nothing to everything.
const (
	AuditNone            AuditLevel = "None"
	AuditMetadata        AuditLevel = "Metadata"
	AuditRequest         AuditLevel = "Request"
	AuditRequestResponse AuditLevel = "RequestResponse"
)

func (l AuditLevel) rank() int {
	switch l {
	case AuditMetadata:
		return 1
	case AuditRequest:
		return 2
	case AuditRequestResponse:
		return 3
	}
	return 0
}

// StageResponseComplete is the stage of every recorded event but those of
// requests that panicked.
const StageResponseComplete = "ResponseComplete"

// StagePanic is the stage of the event of a request whose handler
// panicked.
const StagePanic = "Panic"

// AuditPolicy is an audit.k8s.io/v1 Policy.
type AuditPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Rules             []AuditPolicyRule `json:"rules"`
	OmitStages        []string          `json:"omitStages,omitempty"`
	OmitManagedFields bool              `json:"omitManagedFields,omitempty"`
}

// AuditPolicyRule is a rule of an audit Policy; the first rule that
// matches a request decides its level.
type AuditPolicyRule struct {
	Level             AuditLevel            `json:"level"`
	Users             []string              `json:"users,omitempty"`
	UserGroups        []string              `json:"userGroups,omitempty"`
	Verbs             []string              `json:"verbs,omitempty"`
	Resources         []AuditGroupResources `json:"resources,omitempty"`
	Namespaces        []string              `json:"namespaces,omitempty"`
	NonResourceURLs   []string              `json:"nonResourceURLs,omitempty"`
	OmitStages        []string              `json:"omitStages,omitempty"`
	OmitManagedFields *bool                 `json:"omitManagedFields,omitempty"`
}

// AuditGroupResources selects resources of one API group.
type AuditGroupResources struct {
	Group         string   `json:"group,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// AuditEvent is an audit.k8s.io/v1 Event.
type AuditEvent struct {
	metav1.TypeMeta          `json:",inline"`
	Level                    AuditLevel                 `json:"level"`
	AuditID                  types.UID                  `json:"auditID"`
	Stage                    string                     `json:"stage"`
	RequestURI               string                     `json:"requestURI"`
	Verb                     string                     `json:"verb"`
	User                     authenticationv1.UserInfo  `json:"user"`
	ImpersonatedUser         *authenticationv1.UserInfo `json:"impersonatedUser,omitempty"`
	SourceIPs                []string                   `json:"sourceIPs,omitempty"`
	UserAgent                string                     `json:"userAgent,omitempty"`
	ObjectRef                *AuditObjectReference      `json:"objectRef,omitempty"`
	ResponseStatus           *metav1.Status             `json:"responseStatus,omitempty"`
	RequestObject            json.RawMessage            `json:"requestObject,omitempty"`
	ResponseObject           json.RawMessage            `json:"responseObject,omitempty"`
	RequestReceivedTimestamp metav1.MicroTime           `json:"requestReceivedTimestamp"`
	StageTimestamp           metav1.MicroTime           `json:"stageTimestamp"`
	Annotations              map[string]string          `json:"annotations,omitempty"`
}

// AuditObjectReference is the object a request is about.
type AuditObjectReference struct {
	Resource        string    `json:"resource,omitempty"`
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name,omitempty"`
	UID             types.UID `json:"uid,omitempty"`
	APIGroup        string    `json:"apiGroup,omitempty"`
	APIVersion      string    `json:"apiVersion,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	Subresource     string    `json:"subresource,omitempty"`
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

var auditTypeMeta = metav1.TypeMeta{APIVersion: "audit.k8s.io/v1", Kind: "Event"}

// DefaultAuditPolicy records every request at Metadata.
func DefaultAuditPolicy() *AuditPolicy {
	return &AuditPolicy{Rules: []AuditPolicyRule{{Level: AuditMetadata}}}
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

// ParseAuditPolicy decodes and validates an audit Policy.
func ParseAuditPolicy(data []byte) (*AuditPolicy, error) {
	var p AuditPolicy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, err
	}
	if p.APIVersion != "audit.k8s.io/v1" || p.Kind != "Policy" {
		return nil, fmt.Errorf("not an audit.k8s.io/v1 Policy (apiVersion %q, kind %q)", p.APIVersion, p.Kind)
	}
	validStage := func(s string) bool {
		return slices.Contains([]string{"RequestReceived", "ResponseStarted", StageResponseComplete, "Panic"}, s)
	}
	for _, s := range p.OmitStages {
		if !validStage(s) {
			return nil, fmt.Errorf("omitStages: unsupported value %q", s)
		}
	}
	for i, r := range p.Rules {
		if r.Level.rank() == 0 && r.Level != AuditNone {
			return nil, fmt.Errorf("rules[%d].level: unsupported value %q", i, r.Level)
		}
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			return nil, fmt.Errorf("rules[%d]: rules cannot apply to both regular resources and non-resource URLs", i)
		}
		for _, s := range r.OmitStages {
			if !validStage(s) {
				return nil, fmt.Errorf("rules[%d].omitStages: unsupported value %q", i, s)
			}
		}
	}
	return &p, nil
}

// levelFor is the level a request is recorded at, and whether its
// ResponseComplete stage is omitted.
func (p *AuditPolicy) levelFor(u *auth.User, info *RequestInfo) (AuditLevel, bool) {
	level, rule := p.ruleFor(u, info)
	return level, p.omits(rule, StageResponseComplete)
}

// ruleFor is the level a request is recorded at and the rule deciding it
// (nil when none matches).
func (p *AuditPolicy) ruleFor(u *auth.User, info *RequestInfo) (AuditLevel, *AuditPolicyRule) {
	for i := range p.Rules {
		r := &p.Rules[i]
		if auditRuleMatches(r, u, info) {
			return r.Level, r
		}
	}
	return AuditNone, nil
}

// omits tells whether the policy, or the rule deciding a request, omits
// a stage.
func (p *AuditPolicy) omits(rule *AuditPolicyRule, stage string) bool {
	return slices.Contains(p.OmitStages, stage) || (rule != nil && slices.Contains(rule.OmitStages, stage))
}

func auditRuleMatches(r *AuditPolicyRule, u *auth.User, info *RequestInfo) bool {
	if len(r.Users) > 0 && (u == nil || !slices.Contains(r.Users, u.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 {
		if u == nil || !slices.ContainsFunc(u.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
			return false
		}
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, info.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return auditRuleMatchesResource(r, info)
	}
	if len(r.NonResourceURLs) > 0 {
		if info.IsResourceRequest {
			return false
		}
		for _, spec := range r.NonResourceURLs {
			if spec == "*" || spec == info.Path || (strings.HasSuffix(spec, "*") && strings.HasPrefix(info.Path, strings.TrimSuffix(spec, "*"))) {
				return true
			}
		}
		return false
	}
	return true
}

func auditRuleMatchesResource(r *AuditPolicyRule, info *RequestInfo) bool {
	if !info.IsResourceRequest {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, info.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := info.Resource
	if info.Subresource != "" {
		combined += "/" + info.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != info.APIGroup {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, info.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case info.Subresource != "" && strings.HasPrefix(res, "*/") && info.Subresource == strings.TrimPrefix(res, "*/"):
				return true
			case strings.HasSuffix(res, "/*") && info.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}

// secretBearing tells whether a request's bodies carry credentials: they
// are never recorded.
func secretBearing(info *RequestInfo) bool {
	switch {
	case info.APIGroup == "" && info.Resource == "secrets":
		return true
	case info.APIGroup == "" && info.Resource == "serviceaccounts" && info.Subresource == "token":
		return true
	case info.APIGroup == authenticationv1.GroupName && info.Resource == "tokenreviews":
		return true
	}
	return false
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

	reqBody  *cappedBuffer
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
	return &auditRecord{ResponseWriter: w, a: s.cfg.Audit, r: r, info: info, start: start, now: s.clock.Now, id: id}
}

// authenticated decides the level, now that the user is known, and starts
// capturing the request body where the level or the object reference
// needs it.
func (rec *auditRecord) authenticated(u *auth.User) {
	if rec == nil {
		return
	}
	rec.user = u
	rec.level, rec.omit = rec.a.policy.levelFor(u, rec.info)
	if secretBearing(rec.info) && rec.level.rank() > AuditMetadata.rank() {
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
		rec.level, rec.omit = rec.a.policy.levelFor(nil, rec.info)
	}
	stage := StageResponseComplete
	omit := rec.omit
	if rec.panic != nil {
		stage = StagePanic
		level, rule := rec.a.policy.ruleFor(rec.user, rec.info)
		omit = level == AuditNone || rec.a.policy.omits(rule, StagePanic)
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
		RequestURI: rec.r.RequestURI, Verb: rec.info.Verb, User: userInfo(rec.user),
		SourceIPs: sourceIPs(rec.r), UserAgent: rec.r.UserAgent(),
		RequestReceivedTimestamp: metav1.NewMicroTime(rec.start), StageTimestamp: metav1.NewMicroTime(stamp),
		Annotations: rec.annotation,
	}
	if rec.acting != nil {
		acting := userInfo(rec.acting)
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
	if body := rec.reqBody.contents(); body != nil {
		var obj runtime.Object
		obj, req = auditBody(body, rec.r.Header.Get("Content-Type"), rec.level.rank() >= AuditRequest.rank())
		completeObjectRef(ev.ObjectRef, obj)
	}
	if rec.level.rank() >= AuditRequest.rank() {
		ev.RequestObject = req
	}
	if rec.level == AuditRequestResponse {
		ev.ResponseObject = resp
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

// completeObjectRef fills the name, namespace, uid and resourceVersion of
// the object a request body holds (a create names its object there), as
// kube's audit does.
func completeObjectRef(ref *AuditObjectReference, obj runtime.Object) {
	if ref == nil || obj == nil {
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if ref.Name == "" {
		ref.Name = m.GetName()
	}
	if ref.Namespace == "" {
		ref.Namespace = m.GetNamespace()
	}
	if ref.UID == "" {
		ref.UID = m.GetUID()
	}
	if ref.ResourceVersion == "" {
		ref.ResourceVersion = m.GetResourceVersion()
	}
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
