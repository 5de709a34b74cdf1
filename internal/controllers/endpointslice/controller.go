// Package endpointslice is the EndpointSlice controller: for every Service
// with a selector it keeps EndpointSlices listing the pods the selector
// matches — their addresses, ports (named target ports resolved per pod),
// node, zone and conditions ready/serving/terminating — as
// kube-controller-manager's controller of that name does. An endpoint
// exists as soon as its pod has an IP, ready or not: its ready condition
// tells the data plane whether to send it traffic.
//
// It watches Services, Pods and its own EndpointSlices through the shared
// informers and reconciles from a rate-limited workqueue keyed by Service
// namespace/name. Slices it has written but not yet seen in its informer
// make a Service's sync wait (the slice tracker), so that a slow watch
// never makes it create a slice twice. Services without a selector are
// left to whoever writes their slices.
package endpointslice

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubectl/pkg/util/podutils"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "endpointslice"

// Component is the source of the controller's events.
const Component = "endpoint-slice-controller"

// ManagedBy is the value of the endpointslice.kubernetes.io/managed-by
// label on the slices this controller owns.
const ManagedBy = "endpointslice-controller.k8s.io"

// MaxEndpointsPerSlice bounds the endpoints of one slice, as
// kube-controller-manager's --max-endpoints-per-slice default does.
const MaxEndpointsPerSlice = 100

// Event reasons.
const (
	// ReasonFailedToUpdateEndpointSlices: writing a Service's slices failed.
	ReasonFailedToUpdateEndpointSlices = "FailedToUpdateEndpointSlices"
)

// Controller is the EndpointSlice controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	log      *slog.Logger

	serviceLister  corelisters.ServiceLister
	servicesSynced cache.InformerSynced
	podLister      corelisters.PodLister
	podsSynced     cache.InformerSynced
	nodeLister     corelisters.NodeLister
	nodesSynced    cache.InformerSynced
	sliceLister    discoverylisters.EndpointSliceLister
	slicesSynced   cache.InformerSynced

	tracker *Tracker
	queue   workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared Service, Pod, Node and
// EndpointSlice informers. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:   cc.Client,
		recorder: cc.Recorder(Component),
		log:      cc.Logger,
		tracker:  NewTracker(),
		// Conflicts and stale caches resolve within milliseconds: retry
		// fast at first, as kube's controller does (1s there).
		queue: controllers.NewQueue(Name, cc.Clock, workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 100*time.Second),
		)),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	svcInformer := cc.Informers.Core().V1().Services()
	if _, err := svcInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueService,
		UpdateFunc: func(_, obj interface{}) { c.enqueueService(obj) },
		DeleteFunc: c.enqueueService,
	}); err != nil {
		return nil, fmt.Errorf("endpointslice controller: watch services: %w", err)
	}
	c.serviceLister, c.servicesSynced = svcInformer.Lister(), svcInformer.Informer().HasSynced

	podInformer := cc.Informers.Core().V1().Pods()
	if _, err := podInformer.Informer().AddEventHandler(PodHandler(svcInformer.Lister(), func(key string) { c.queue.Add(key) })); err != nil {
		return nil, fmt.Errorf("endpointslice controller: watch pods: %w", err)
	}
	c.podLister, c.podsSynced = podInformer.Lister(), podInformer.Informer().HasSynced

	nodeInformer := cc.Informers.Core().V1().Nodes()
	c.nodeLister, c.nodesSynced = nodeInformer.Lister(), nodeInformer.Informer().HasSynced

	sliceInformer := cc.Informers.Discovery().V1().EndpointSlices()
	if _, err := sliceInformer.Informer().AddEventHandler(c.tracker.Handler(ManagedBy, c.queue.Add)); err != nil {
		return nil, fmt.Errorf("endpointslice controller: watch endpointslices: %w", err)
	}
	c.sliceLister, c.slicesSynced = sliceInformer.Lister(), sliceInformer.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.servicesSynced, c.podsSynced, c.nodesSynced, c.slicesSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			if err != errStale {
				c.log.Info("sync failed, will retry", "service", key, "err", err)
			}
		},
	}.Run(ctx, workers)
}

func (c *Controller) enqueueService(obj interface{}) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.queue.Add(key)
}

// PodHandler queues, through add, the key of every Service whose
// selector matches a pod that was added or deleted, or whose update can
// change its endpoint (and, when its labels changed, of the Services that
// selected it before). The endpoints and endpointslice controllers share
// it.
func PodHandler(services corelisters.ServiceLister, add func(key string)) cache.ResourceEventHandlerFuncs {
	changed := func(oldObj, obj interface{}) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		old, _ := oldObj.(*corev1.Pod)
		if old != nil && !endpointChanged(old, pod) {
			return
		}
		queueSelecting(services, add, pod)
		if old != nil && !reflect.DeepEqual(old.Labels, pod.Labels) {
			queueSelecting(services, add, old)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { changed(nil, obj) },
		UpdateFunc: changed,
		DeleteFunc: func(obj interface{}) { changed(nil, obj) },
	}
}

// queueSelecting adds the key of every Service selecting pod.
func queueSelecting(services corelisters.ServiceLister, add func(key string), pod *corev1.Pod) {
	svcs, err := services.Services(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, svc := range svcs {
		if svc.Spec.Selector == nil {
			continue
		}
		if labels.SelectorFromValidatedSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			add(svc.Namespace + "/" + svc.Name)
		}
	}
}

// endpointChanged tells whether a pod update can change its endpoint.
func endpointChanged(old, pod *corev1.Pod) bool {
	return !reflect.DeepEqual(old.Labels, pod.Labels) ||
		!reflect.DeepEqual(old.Status.PodIPs, pod.Status.PodIPs) || old.Status.PodIP != pod.Status.PodIP ||
		podutils.IsPodReady(old) != podutils.IsPodReady(pod) || old.Status.Phase != pod.Status.Phase ||
		(old.DeletionTimestamp == nil) != (pod.DeletionTimestamp == nil) ||
		old.Spec.NodeName != pod.Spec.NodeName ||
		old.Spec.Hostname != pod.Spec.Hostname || old.Spec.Subdomain != pod.Spec.Subdomain
}
