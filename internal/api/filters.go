package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minik/internal/auth"
	"minik/internal/promstats"
)

// The handler chain's protective stages, as kube-apiserver's filters:
//
//   - panic recovery (filters.WithPanicRecovery): a handler that panics
//     answers a 500 Status, reason InternalError, "Internal error occurred:
//     This request caused apiserver to panic. Look in the logs for details."
//     (kube writes those words as plain text), is logged at error
//     with its stack and audited at stage Panic; when the response had
//     already started, the stream is aborted instead (http.ErrAbortHandler).
//   - API Priority and Fairness (filters.WithPriorityAndFairness) when
//     Config.FlowControl is set: see flowcontrol.go.
//   - otherwise the in-flight limit (filters.WithMaxInFlightLimit): at most
//     MaxRequestsInFlight read-only (get, list) and
//     MaxMutatingRequestsInFlight other requests are served at once; one
//     more answers 429 with Retry-After: 1 unless its user is in
//     system:masters. Long-running requests and the health paths take no
//     slot.
//   - the request timeout (filters.WithTimeoutForNonLongRunningRequests and
//     WithRequestDeadline): a request that is not long-running ends after
//     RequestTimeout (or its shorter ?timeout=): 504 Timeout when nothing
//     was written yet, an aborted stream otherwise. Its body reads get the
//     same deadline, so a body that trickles in is cut off.

// The answers of the stages, in kube's words.
const (
	panicMessage      = "This request caused apiserver to panic. Look in the logs for details."
	tooManyMessage    = "Too many requests, please try again later."
	timeoutMessage    = "request did not complete within the allotted timeout"
	invalidTimeoutURL = "invalid timeout specified in the request URL"
)

// DefaultRequestTimeout is kube-apiserver's --request-timeout.
const DefaultRequestTimeout = 60 * time.Second

// bodyGrace is how long after a request's timeout its body may still be
// read: the 504 is sent at the timeout, the body read fails after.
const bodyGrace = time.Second

// longRunningSubresources stream for as long as the client wants, as
// kube-apiserver's BasicLongRunningRequestCheck's set.
var longRunningSubresources = []string{"attach", "exec", "log", "portforward", "proxy"}

// longRunning tells whether a request streams for long: watches, proxies
// and the attach, exec, log and portforward subresources. They take no
// in-flight slot and have no request timeout.
func longRunning(info *RequestInfo) bool {
	if info.Verb == "watch" || info.Verb == "proxy" {
		return true
	}
	return info.IsResourceRequest && slices.Contains(longRunningSubresources, info.Subresource)
}

// healthPath tells whether a request is a health probe: probes never wait
// behind work (kube's priority-and-fairness exempts them).
func healthPath(info *RequestInfo) bool {
	if info.IsResourceRequest {
		return false
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if info.Path == p || len(info.Path) > len(p) && info.Path[:len(p)+1] == p+"/" {
			return true
		}
	}
	return false
}

// inflightLimit hands out the in-flight slots of read-only and of mutating
// requests; a nil channel means no limit.
type inflightLimit struct {
	readOnly, mutating chan struct{}
}

func newInflightLimit(readOnly, mutating int) *inflightLimit {
	l := &inflightLimit{}
	if readOnly > 0 {
		l.readOnly = make(chan struct{}, readOnly)
	}
	if mutating > 0 {
		l.mutating = make(chan struct{}, mutating)
	}
	return l
}

// acquire takes a slot for a request: release gives it back. ok is false
// when the request's kind of slots is full.
func (l *inflightLimit) acquire(info *RequestInfo) (release func(), ok bool) {
	c := l.mutating
	switch info.Verb {
	case "get", "list", "watch":
		c = l.readOnly
	}
	if c == nil {
		return func() {}, true
	}
	select {
	case c <- struct{}{}:
		return func() { <-c }, true
	default:
		return nil, false
	}
}

// requestTimeout is how long a request may take: RequestTimeout, or the
// request's ?timeout= when shorter, as kube's WithRequestDeadline.
func (s *Server) requestTimeout(r *http.Request) (time.Duration, error) {
	d := s.cfg.RequestTimeout
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return d, nil
	}
	asked, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("%s - %s", invalidTimeoutURL, err))
	}
	if asked > 0 && asked < d {
		d = asked
	}
	return d, nil
}

// serveLimited runs a request under the in-flight limit (or API Priority
// and Fairness, see flowcontrol.go) and the request timeout (see the top
// of this file): authorize runs once the request holds its seat, as
// kube's chain authorizes after its limiting filter, and answers the
// request itself when it returns false; next then serves it. The seat is
// held until next returns, also when the client was answered 504 before:
// the work still runs.
func (s *Server) serveLimited(w http.ResponseWriter, r *http.Request, info *RequestInfo, u *auth.User, arrived time.Time, authorize func(*http.Request) bool, next http.Handler) {
	watch := info.Verb == "watch"
	if longRunning(info) && !watch {
		if authorize(r) {
			next.ServeHTTP(w, r)
		}
		return
	}
	if !watch {
		d, err := s.requestTimeout(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		// The context ends at the deadline (or when the client goes),
		// never when the handler returns: ctx.Done in serveTimed means a
		// timeout.
		ctx, cancel := context.WithDeadline(r.Context(), arrived.Add(d))
		defer cancel()
		r = r.WithContext(ctx)
	}
	var release func()
	if s.flow != nil {
		var ok bool
		if release, r, ok = s.flow.admit(w, r, info, u, arrived); !ok {
			return
		}
	} else {
		var ok bool
		if release, ok = s.acquireInflight(w, info, u); !ok {
			return
		}
	}
	if !authorize(r) {
		release()
		return
	}
	if watch {
		defer release()
		next.ServeHTTP(w, r)
		return
	}
	s.serveTimed(w, r, release, next)
}

// acquireInflight takes an in-flight slot of the request's kind, without
// API Priority and Fairness, as kube's WithMaxInFlightLimit: watches and
// the health paths take none, system:masters are served when the slots
// are full; others are answered 429 with Retry-After: 1 (ok false).
func (s *Server) acquireInflight(w http.ResponseWriter, info *RequestInfo, u *auth.User) (release func(), ok bool) {
	if info.Verb == "watch" || healthPath(info) {
		return func() {}, true
	}
	release, ok = s.limit.acquire(info)
	if !ok {
		if !slices.Contains(u.Groups, auth.GroupMasters) {
			tooManyRequests(w, "1")
			return nil, false
		}
		// system:masters always get an answer (kube: "a super-admin or a
		// loopback connection").
		release = func() {}
	}
	kind := promstats.RequestKindMutating
	if info.Verb == "get" || info.Verb == "list" {
		kind = promstats.RequestKindReadOnly
	}
	done, free := promstats.InflightStarted(kind), release
	return func() { done(); free() }, true
}

// serveTimed runs next until the deadline of r's context: a handler that
// has not answered by then is answered 504 (or its stream cut), and goes
// on in the background until it returns; release is called when it
// returns (before the client hears a normal answer).
func (s *Server) serveTimed(w http.ResponseWriter, r *http.Request, release func(), next http.Handler) {
	ctx := r.Context()
	deadline, _ := ctx.Deadline()
	// A body that trickles in is cut off soon after the deadline (the 504
	// goes first): the handler does not wait on it forever.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(deadline.Add(bodyGrace))
	tw := &timeoutWriter{w: w}
	done := make(chan *handlerPanic, 1)
	go func() {
		defer func() {
			var p *handlerPanic
			if v := recover(); v != nil {
				p = &handlerPanic{value: v, stack: debug.Stack()}
			}
			// The slot is free before the client hears the answer.
			release()
			done <- p
		}()
		next.ServeHTTP(tw, r)
	}()
	select {
	case p := <-done:
		// The connection's next request (HTTP/1) has no deadline of ours.
		_ = rc.SetReadDeadline(time.Time{})
		if p != nil {
			panic(p)
		}
		return
	case <-ctx.Done():
	}
	// The deadline passed: the handler's writes stop here.
	fresh := tw.timeout()
	select {
	case p := <-done:
		if p != nil {
			panic(p)
		}
		if !fresh {
			// It finished as the deadline passed: its answer stands.
			_ = rc.SetReadDeadline(time.Time{})
			return
		}
	default:
		// The handler is still running; it sees its context done. A
		// panic of it from now on is only logged.
		go func() {
			if p := <-done; p != nil && p.value != http.ErrAbortHandler {
				s.log.Error("apiserver panic'd after its request timed out", "method", r.Method, "URI", r.RequestURI, "panic", fmt.Sprint(p.value), "stack", string(p.stack))
			}
		}()
		if !fresh {
			// Part of the response is out: all that can be done is to
			// cut it.
			panic(http.ErrAbortHandler)
		}
	}
	writeError(w, r, apierrors.NewTimeoutError(timeoutMessage, 0))
}

// handlerPanic carries a handler's panic, with its stack, out of the
// goroutine it ran in.
type handlerPanic struct {
	value any
	stack []byte
}

// timeoutWriter passes a handler's writes on until its request times out,
// and drops them afterwards.
type timeoutWriter struct {
	w  http.ResponseWriter
	mu sync.Mutex
	// wrote is set once the handler wrote a status or body; timedOut once
	// the request timed out.
	wrote, timedOut bool
	// header is what the handler sees as its header after the timeout.
	header http.Header
}

// timeout ends the handler's writes; it tells whether nothing was written,
// so that the 504 can still be sent.
func (tw *timeoutWriter) timeout() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.timedOut = true
	return !tw.wrote
}

func (tw *timeoutWriter) Header() http.Header {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		if tw.header == nil {
			tw.header = http.Header{}
		}
		return tw.header
	}
	return tw.w.Header()
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wrote {
		return
	}
	tw.wrote = true
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	tw.wrote = true
	return tw.w.Write(p)
}

// Flush flushes what was written, until the timeout.
func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return
	}
	if f, ok := tw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// responseState notes whether a response has started, for the panic
// recovery to know whether it may still answer.
type responseState struct {
	http.ResponseWriter
	started bool
	// code is the status sent (0 until then), for the request metrics.
	code int
}

func (rs *responseState) WriteHeader(code int) {
	if !rs.started {
		rs.code = code
	}
	rs.started = true
	rs.ResponseWriter.WriteHeader(code)
}

func (rs *responseState) Write(p []byte) (int, error) {
	rs.started = true
	return rs.ResponseWriter.Write(p)
}

// Flush lets streams flush through.
func (rs *responseState) Flush() {
	if f, ok := rs.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (rs *responseState) Unwrap() http.ResponseWriter { return rs.ResponseWriter }

// observeRequest is deferred by ServeHTTP: it records the request in the
// request metrics (apiserver_request_total and _duration_seconds) with the
// code it was answered, also a 500 of a panic.
func (s *Server) observeRequest(rs *responseState, r *http.Request, info *RequestInfo, start time.Time) {
	code := rs.code
	if code == 0 {
		code = http.StatusOK
	}
	promstats.ObserveRequest(promstats.Request{
		Method: r.Method, Verb: info.Verb, IsResource: info.IsResourceRequest,
		Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource, Subresource: info.Subresource,
		Namespace: info.Namespace, Name: info.Name, URL: r.URL, ContentType: r.Header.Get("Content-Type"),
	}, code, s.clock.Since(start))
}

// recoverPanic is deferred by ServeHTTP: a panic of the chain (or of a
// handler, carried over by serveLimited) answers 500 and is logged and
// audited; http.ErrAbortHandler, and any panic once the response has
// started, aborts the response instead.
func (s *Server) recoverPanic(rs *responseState, r *http.Request, audit *auditRecord) {
	v := recover()
	if v == nil {
		return
	}
	stack := debug.Stack()
	if p, ok := v.(*handlerPanic); ok {
		v, stack = p.value, p.stack
	}
	if v == http.ErrAbortHandler {
		s.log.Debug("timeout or abort while handling", "method", r.Method, "URI", r.RequestURI)
		panic(http.ErrAbortHandler)
	}
	s.log.Error("apiserver panic'd", "method", r.Method, "URI", r.RequestURI, "panic", fmt.Sprint(v), "stack", string(stack))
	audit.panicked(v)
	if rs.started {
		panic(http.ErrAbortHandler)
	}
	// A Status, as every other answer of the server, which clients decode
	// (kube's filter writes the same words as plain text); the panic itself
	// stays in the log.
	writeError(rs, r, apierrors.NewInternalError(errors.New(panicMessage)))
}
