package api

import (
	"context"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"

	"minik/internal/auth"
	"minik/internal/promstats"
)

// API Priority and Fairness, as kube-apiserver's WithPriorityAndFairness
// filter (k8s.io/apiserver/pkg/server/filters): each request but the
// long-running ones (watches excepted) is handed to the dispatcher
// (Config.FlowControl), which classifies it to a FlowSchema and priority
// level and executes it at once (exempt levels), when a seat of its level
// is free, or after waiting in one of the level's queues (shuffle sharded
// by the flow distinguisher); a request its level rejects (a Reject level
// full, a full queue, or a wait longer than a quarter of the request's
// time) is answered 429 with the level's Retry-After. The response carries
// the X-Kubernetes-PF-FlowSchema-UID and -PriorityLevel-UID headers. A
// watch holds its seat until it is initialized (its initial events sent),
// then streams without one.
//
// Deliberate differences: a list costs one seat whatever the number of
// objects (minik does not track object counts and sizes as kube's
// storage does, which kube's estimator then reads as for an aggregated
// resource); the timeout of a request that waited counts from its
// arrival, as kube, but its 504 answer releases the seat only when the
// handler returns, as kube.

// flowControl is the API server's side of API Priority and Fairness.
type flowControl struct {
	fc        utilflowcontrol.Interface
	estimator fcrequest.WorkEstimatorFunc
	// dropped remembers the rejections of each priority level, from
	// which the Retry-After of the next one is computed.
	dropped utilflowcontrol.DroppedRequestsTracker
	// defaultWait bounds the wait of a request without a deadline (a
	// watch's initialization): kube's RequestTimeout/4.
	defaultWait time.Duration
}

func newFlowControl(fc utilflowcontrol.Interface, requestTimeout time.Duration) *flowControl {
	return &flowControl{
		fc:          fc,
		estimator:   fcrequest.NewWorkEstimator(noObjectCounts, fc.GetInterestedWatchCount, fcrequest.DefaultWorkEstimatorConfig(), fc.GetMaxSeats),
		dropped:     utilflowcontrol.NewDroppedRequestsTracker(),
		defaultWait: requestTimeout / 4,
	}
}

// noObjectCounts tells kube's work estimator that no object count is
// known: it then estimates a list at the minimum of seats.
func noObjectCounts(string) (storage.Stats, error) {
	return storage.Stats{}, fcrequest.ObjectCountNotFoundErr
}

// maxWait is kube's bound on any request's wait in a queue.
const maxWait = time.Minute

// waitContext is kube's getRequestWaitContext: a request may wait in its
// queue a quarter of the time from its arrival to its deadline (or
// defaultWait without a deadline), a minute at most.
func (f *flowControl) waitContext(ctx context.Context, arrived time.Time) (context.Context, context.CancelFunc) {
	if ctx.Err() != nil {
		return ctx, func() {}
	}
	limit := f.defaultWait
	if deadline, ok := ctx.Deadline(); ok {
		limit = deadline.Sub(arrived) / 4
	}
	return context.WithDeadline(ctx, arrived.Add(min(limit, maxWait)))
}

// classification is what the dispatcher's classification of a request
// tells.
type classification struct {
	flowSchema, priorityLevel       string
	flowSchemaUID, priorityLevelUID string
}

// setHeaders sets the X-Kubernetes-PF-* headers (UIDs, not names, as
// kube: the names an administrator chose are not shown).
func (c *classification) setHeaders(w http.ResponseWriter) {
	if c == nil {
		return
	}
	w.Header().Set(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID, c.priorityLevelUID)
	w.Header().Set(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, c.flowSchemaUID)
}

// admit waits until the dispatcher executes the request (the returned
// release ends its execution and frees its seats) or rejects it (ok
// false: the 429 is written). The request returned carries kube's request
// info and user, and for a watch the initialization signal that
// WatchInitialized (or release) sends. It blocks at most as long as
// waitContext allows.
func (f *flowControl) admit(w http.ResponseWriter, r *http.Request, info *RequestInfo, u *auth.User, arrived time.Time) (release func(), _ *http.Request, ok bool) {
	kinfo := info.kube()
	ctx := apirequest.WithRequestInfo(r.Context(), kinfo)
	ctx = apirequest.WithUser(ctx, u.Info())
	watch := info.Verb == "watch"
	var signal utilflowcontrol.InitializationSignal
	if watch {
		signal = utilflowcontrol.NewInitializationSignal()
		ctx = utilflowcontrol.WithInitializationSignal(ctx, signal)
	}
	r = r.WithContext(ctx)

	var class *classification
	note := func(fs *flowcontrolv1.FlowSchema, pl *flowcontrolv1.PriorityLevelConfiguration, _ string) {
		class = &classification{flowSchema: fs.Name, priorityLevel: pl.Name, flowSchemaUID: string(fs.UID), priorityLevelUID: string(pl.UID)}
	}
	estimate := func() fcrequest.WorkEstimate {
		var fsName, plName string
		if class != nil {
			fsName, plName = class.flowSchema, class.priorityLevel
		}
		return f.estimator(r, fsName, plName)
	}
	// finished ends the execution of a request that is not a watch; a
	// watch's ends with its initialization signal.
	finished := make(chan struct{})
	dispatched := make(chan struct{})
	var forgetWatch utilflowcontrol.ForgetWatchFunc
	execute := func() {
		class.setHeaders(w)
		kind := promstats.RequestKindMutating
		if info.Verb == "get" || info.Verb == "list" || watch {
			kind = promstats.RequestKindReadOnly
		}
		defer promstats.InflightStarted(kind)()
		if watch {
			forgetWatch = f.fc.RegisterWatch(r)
		}
		close(dispatched)
		if watch {
			signal.Wait()
			return
		}
		<-finished
	}
	// Handle runs in a goroutine of its own: the request runs in this
	// one, and may end (a 504) before its execution does.
	result := make(chan *handlerPanic, 1)
	go func() {
		defer func() {
			var p *handlerPanic
			if v := recover(); v != nil {
				p = &handlerPanic{value: v, stack: debug.Stack()}
			}
			result <- p
		}()
		waitCtx, cancel := f.waitContext(ctx, arrived)
		defer cancel()
		f.fc.Handle(waitCtx, utilflowcontrol.RequestDigest{RequestInfo: kinfo, User: u.Info()}, note, estimate, func(bool) {}, execute)
	}()
	select {
	case <-dispatched:
		if watch {
			return func() {
				signal.Signal()
				if forgetWatch != nil {
					forgetWatch()
				}
			}, r, true
		}
		return func() { close(finished) }, r, true
	case p := <-result:
		if p != nil {
			panic(p)
		}
	}
	// Rejected.
	class.setHeaders(w)
	plName := ""
	if class != nil {
		plName = class.priorityLevel
	}
	f.dropped.RecordDroppedRequest(plName)
	tooManyRequests(w, strconv.FormatInt(f.dropped.GetRetryAfter(plName), 10))
	return nil, r, false
}

// tooManyRequests is kube's 429 of a rejected or limited request, plain
// text as kube-apiserver writes it (client-go turns it into a Status of
// reason TooManyRequests with the Retry-After in its details).
func tooManyRequests(w http.ResponseWriter, retryAfter string) {
	w.Header().Set("Retry-After", retryAfter)
	http.Error(w, tooManyMessage, http.StatusTooManyRequests)
}

// kube returns the request info as k8s.io/apiserver's, which the
// dispatcher and its work estimator read.
func (i *RequestInfo) kube() *apirequest.RequestInfo {
	return &apirequest.RequestInfo{
		IsResourceRequest: i.IsResourceRequest, Path: i.Path, Verb: i.Verb,
		APIPrefix: i.APIPrefix, APIGroup: i.APIGroup, APIVersion: i.APIVersion,
		Namespace: i.Namespace, Resource: i.Resource, Subresource: i.Subresource, Name: i.Name,
		Parts: i.Parts, FieldSelector: i.FieldSelector,
	}
}
