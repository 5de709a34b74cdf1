// Package endpointslicemirroring is the EndpointSlice mirroring
// controller: for every Endpoints object a user writes for a Service
// without a selector, it keeps EndpointSlices mirroring its addresses, as
// kube-controller-manager's endpointslice-mirroring-controller does, so
// that whatever reads EndpointSlices (the data plane's Service proxy) sees
// custom endpoints too.
//
// Endpoints are mirrored unless labelled
// endpointslice.kubernetes.io/skip-mirror=true, or carrying a leader
// election record, or their Service is missing or has a selector (the
// endpointslice controller writes that Service's slices); the mirrored
// slices then go. Each address type and port mapping of the Endpoints
// gets one slice (at most MaxEndpointsPerSubset endpoints from each
// subset, as --mirroring-max-endpoints-per-subset), labelled
// endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io
// and kubernetes.io/service-name, with the Endpoints' other labels and
// annotations (not endpoints.kubernetes.io/last-change-trigger-time nor
// the last applied configuration), owned by the Endpoints as kube's are.
// Ready addresses become endpoints with ready=true, not-ready ones with
// ready=false.
//
// It watches Endpoints, Services and its own EndpointSlices through the
// shared informers and reconciles from a rate-limited workqueue keyed by
// namespace/name; like the endpointslice controller, it waits for its
// informer to show its own writes (endpointslice.Tracker) before acting
// again.
package endpointslicemirroring

//lint:file-ignore SA1019 core/v1 Endpoints are deprecated, and kube still mirrors the ones users write: so does minik.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"minik/internal/controllers"
	"minik/internal/controllers/endpointslice"
)

// Name is the controller's name in --controllers.
const Name = "endpointslice-mirroring-controller"

// Component is the source of the controller's events.
const Component = "endpoint-slice-mirroring-controller"

// ManagedBy is the value of the endpointslice.kubernetes.io/managed-by
// label on the slices this controller owns.
const ManagedBy = "endpointslicemirroring-controller.k8s.io"

// MaxEndpointsPerSubset bounds the addresses mirrored from one Endpoints
// subset, as kube-controller-manager's
// --mirroring-max-endpoints-per-subset default does.
const MaxEndpointsPerSubset = 1000

// Event reasons, kube's.
const (
	// ReasonInvalidIPAddress: an address of the Endpoints is not an IP.
	ReasonInvalidIPAddress = "InvalidIPAddress"
	// ReasonTooManyAddressesToMirror: a subset had more than
	// MaxEndpointsPerSubset addresses.
	ReasonTooManyAddressesToMirror = "TooManyAddressesToMirror"
	// ReasonFailedToUpdateEndpointSlices: writing the slices failed.
	ReasonFailedToUpdateEndpointSlices = "FailedToUpdateEndpointSlices"
)

// errStale: the informer has not caught up with this controller's writes.
var errStale = errors.New("endpointslice cache is behind this controller's writes")

// Controller is the EndpointSlice mirroring controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	log      *slog.Logger

	endpointsLister corelisters.EndpointsLister
	endpointsSynced cache.InformerSynced
	serviceLister   corelisters.ServiceLister
	servicesSynced  cache.InformerSynced
	sliceLister     discoverylisters.EndpointSliceLister
	slicesSynced    cache.InformerSynced

	maxPerSubset int
	tracker      *endpointslice.Tracker
	queue        workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared Endpoints, Service and
// EndpointSlice informers. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:       cc.Client,
		recorder:     cc.Recorder(Component),
		log:          cc.Logger,
		maxPerSubset: MaxEndpointsPerSubset,
		tracker:      endpointslice.NewTracker(),
		queue: controllers.NewQueue(Name, cc.Clock, workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 100*time.Second),
		)),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}
	epInformer := cc.Informers.Core().V1().Endpoints()
	if _, err := epInformer.Informer().AddEventHandler(enqueue); err != nil {
		return nil, fmt.Errorf("endpointslice mirroring controller: watch endpoints: %w", err)
	}
	c.endpointsLister, c.endpointsSynced = epInformer.Lister(), epInformer.Informer().HasSynced

	svcInformer := cc.Informers.Core().V1().Services()
	if _, err := svcInformer.Informer().AddEventHandler(enqueue); err != nil {
		return nil, fmt.Errorf("endpointslice mirroring controller: watch services: %w", err)
	}
	c.serviceLister, c.servicesSynced = svcInformer.Lister(), svcInformer.Informer().HasSynced

	sliceInformer := cc.Informers.Discovery().V1().EndpointSlices()
	if _, err := sliceInformer.Informer().AddEventHandler(c.tracker.Handler(ManagedBy, c.queue.Add)); err != nil {
		return nil, fmt.Errorf("endpointslice mirroring controller: watch endpointslices: %w", err)
	}
	c.sliceLister, c.slicesSynced = sliceInformer.Lister(), sliceInformer.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:     []cache.InformerSynced{c.endpointsSynced, c.servicesSynced, c.slicesSynced},
		Queue:      c.queue,
		Reconcile:  c.sync,
		MaxRetries: 15,
		Logger:     c.log,
		OnError: func(key string, err error) {
			if err != errStale {
				c.log.Info("sync failed, will retry", "endpoints", key, "err", err)
			}
		},
	}.Run(ctx, workers)
}

// enqueue queues the key of an Endpoints or Service (they share it).
func (c *Controller) enqueue(obj interface{}) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.queue.Add(key)
}

// shouldMirror tells whether an Endpoints object is mirrored at all, as
// kube's shouldMirror: not labelled skip-mirror, not a leader election
// lock.
func shouldMirror(ep *corev1.Endpoints) bool {
	if ep.Labels[discoveryv1.LabelSkipMirror] == "true" {
		return false
	}
	_, lock := ep.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]
	return !lock
}
