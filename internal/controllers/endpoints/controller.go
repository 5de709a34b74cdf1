// Package endpoints is the endpoints controller: for every Service with a
// selector it keeps the core/v1 Endpoints of the same name listing the
// pods the selector matches, as kube-controller-manager's controller of
// that name does: ready pods under addresses, the others under
// notReadyAddresses (all under addresses when the Service publishes
// not-ready addresses), one subset per set of resolved ports, at most
// 1,000 addresses (then the endpoints.kubernetes.io/over-capacity
// annotation says "truncated"), the Service's labels plus
// endpoints.kubernetes.io/managed-by and, for a headless Service,
// service.kubernetes.io/headless, and the
// endpoints.kubernetes.io/last-change-trigger-time annotation.
//
// It watches Services and Pods through the shared informers and
// reconciles from a rate-limited workqueue keyed by Service
// namespace/name; the Endpoints of a deleted Service are deleted.
// Differences from kube: no stale-informer tracker (a write from a stale
// cache fails with a conflict and is retried), and the trigger time is
// the latest of the Service's creation and its pods' readiness changes.
package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"minik/internal/controllers"
	"minik/internal/controllers/endpointslice"
)

// Name is the controller's name in --controllers.
const Name = "endpoints"

// Component is the source of the controller's events and the value of
// its managed-by label.
const Component = "endpoint-controller"

// LabelManagedBy marks the Endpoints this controller writes.
const LabelManagedBy = "endpoints.kubernetes.io/managed-by"

// MaxCapacity is how many addresses one Endpoints holds at most.
const MaxCapacity = 1000

// Event reasons.
const (
	// ReasonFailedToCreateEndpoint: creating a Service's Endpoints failed.
	ReasonFailedToCreateEndpoint = "FailedToCreateEndpoint"
	// ReasonFailedToUpdateEndpoint: updating a Service's Endpoints failed.
	ReasonFailedToUpdateEndpoint = "FailedToUpdateEndpoint"
)

// Controller is the endpoints controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	log      *slog.Logger

	serviceLister   corelisters.ServiceLister
	servicesSynced  cache.InformerSynced
	podLister       corelisters.PodLister
	podsSynced      cache.InformerSynced
	endpointsLister corelisters.EndpointsLister
	endpointsSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared Service, Pod and Endpoints
// informers. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:   cc.Client,
		recorder: cc.Recorder(Component),
		log:      cc.Logger,
		queue: controllers.NewQueue(Name, cc.Clock, workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 100*time.Second),
		)),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	svcInformer := cc.Informers.Core().V1().Services()
	if _, err := svcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("endpoints controller: watch services: %w", err)
	}
	c.serviceLister, c.servicesSynced = svcInformer.Lister(), svcInformer.Informer().HasSynced

	podInformer := cc.Informers.Core().V1().Pods()
	// The Services selecting a pod whose endpoint may have changed, as
	// the endpointslice controller finds them.
	if _, err := podInformer.Informer().AddEventHandler(endpointslice.PodHandler(svcInformer.Lister(), func(key string) { c.queue.Add(key) })); err != nil {
		return nil, fmt.Errorf("endpoints controller: watch pods: %w", err)
	}
	c.podLister, c.podsSynced = podInformer.Lister(), podInformer.Informer().HasSynced

	epInformer := cc.Informers.Core().V1().Endpoints()
	if _, err := epInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		// Someone else's change to a managed Endpoints is undone.
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, fmt.Errorf("endpoints controller: watch endpoints: %w", err)
	}
	c.endpointsLister, c.endpointsSynced = epInformer.Lister(), epInformer.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.servicesSynced, c.podsSynced, c.endpointsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("sync failed, will retry", "service", key, "err", err)
		},
	}.Run(ctx, workers)
}

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
