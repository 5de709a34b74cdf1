// Package daemonset is the DaemonSet controller: it runs one pod of each
// DaemonSet on every node the pod may run on (node selector, required node
// affinity, taints its tolerations allow), creating pods as nodes come and
// deleting them as nodes go or stop fitting, replacing pods of an older
// template at most maxUnavailable at a time, recording each template in a
// ControllerRevision and reporting the DaemonSet's status, as
// kube-controller-manager's controller of that name does.
//
// As in kube, the controller does not bind its pods: it pins each to its
// node with a required node affinity on the field metadata.name and lets
// the default scheduler bind it, and it adds the tolerations every daemon
// pod gets (not-ready, unreachable, disk-, memory- and pid-pressure,
// unschedulable).
package daemonset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "daemonset"

// Component is the source of the controller's events.
const Component = "daemonset-controller"

// Event reasons.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
	ReasonFailedDaemonPod  = "FailedDaemonPod"
)

// creationTimeout is how long a creation the informer has not shown yet
// keeps the controller from creating another pod on the same node.
const creationTimeout = time.Minute

var controllerKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// Controller is the DaemonSet controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.WithTicker
	log      *slog.Logger

	dsLister        appslisters.DaemonSetLister
	dsSynced        cache.InformerSynced
	podLister       corelisters.PodLister
	podsSynced      cache.InformerSynced
	nodeLister      corelisters.NodeLister
	nodesSynced     cache.InformerSynced
	revisionLister  appslisters.ControllerRevisionLister
	revisionsSynced cache.InformerSynced

	// pending remembers, per DaemonSet key and node, the pod creations the
	// informer has not shown yet, so that a slow watch never makes two
	// pods for one node.
	mu      sync.Mutex
	pending map[string]map[string]time.Time

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared DaemonSet, Pod, Node and
// ControllerRevision informers. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:   cc.Client,
		recorder: cc.Recorder(Component),
		clock:    cc.Clock,
		log:      cc.Logger,
		pending:  map[string]map[string]time.Time{},
		queue:    controllers.NewQueue[string](Name, cc.Clock, nil),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	dss := cc.Informers.Apps().V1().DaemonSets()
	if _, err := dss.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: func(obj interface{}) {
			if ds, ok := controllers.Deleted[*appsv1.DaemonSet](obj); ok {
				c.enqueue(ds)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("daemonset controller: watch daemonsets: %w", err)
	}
	c.dsLister, c.dsSynced = dss.Lister(), dss.Informer().HasSynced

	pods := cc.Informers.Core().V1().Pods()
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { c.podChanged(obj, true) },
		UpdateFunc: func(old, cur interface{}) { c.podChanged(old, false); c.podChanged(cur, false) },
		DeleteFunc: func(obj interface{}) { c.podChanged(obj, false) },
	}); err != nil {
		return nil, fmt.Errorf("daemonset controller: watch pods: %w", err)
	}
	c.podLister, c.podsSynced = pods.Lister(), pods.Informer().HasSynced

	nodes := cc.Informers.Core().V1().Nodes()
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { c.enqueueAll() },
		UpdateFunc: c.nodeUpdated,
		DeleteFunc: func(interface{}) { c.enqueueAll() },
	}); err != nil {
		return nil, fmt.Errorf("daemonset controller: watch nodes: %w", err)
	}
	c.nodeLister, c.nodesSynced = nodes.Lister(), nodes.Informer().HasSynced

	revs := cc.Informers.Apps().V1().ControllerRevisions()
	if _, err := revs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj interface{}) {
			if r, ok := controllers.Deleted[*appsv1.ControllerRevision](obj); ok {
				if ref := metav1.GetControllerOfNoCopy(r); ref != nil && ref.Kind == controllerKind.Kind {
					c.queue.Add(r.Namespace + "/" + ref.Name)
				}
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("daemonset controller: watch controllerrevisions: %w", err)
	}
	c.revisionLister, c.revisionsSynced = revs.Lister(), revs.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.dsSynced, c.podsSynced, c.nodesSynced, c.revisionsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("sync failed, will retry", "daemonset", key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj interface{}) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueAll() {
	dss, err := c.dsLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ds := range dss {
		c.enqueue(ds)
	}
}

// nodeUpdated wakes every DaemonSet when a change may alter which
// DaemonSets the node should run: labels, taints, readiness.
func (c *Controller) nodeUpdated(oldObj, newObj interface{}) {
	old, cur := oldObj.(*corev1.Node), newObj.(*corev1.Node)
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	if labels.Equals(old.Labels, cur.Labels) && fmt.Sprint(old.Spec.Taints) == fmt.Sprint(cur.Spec.Taints) &&
		old.Spec.Unschedulable == cur.Spec.Unschedulable && nodeReady(old) == nodeReady(cur) {
		return
	}
	c.enqueueAll()
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podChanged wakes the DaemonSet controlling a pod; a pod seen for the
// first time settles the pending creation on its node.
func (c *Controller) podChanged(obj interface{}, added bool) {
	pod, ok := controllers.Deleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != controllerKind.Kind {
		return
	}
	key := pod.Namespace + "/" + ref.Name
	if added {
		c.creationObserved(key, targetNode(pod))
	}
	c.queue.Add(key)
}

func (c *Controller) expectCreation(key, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[key] == nil {
		c.pending[key] = map[string]time.Time{}
	}
	c.pending[key][node] = c.clock.Now()
}

func (c *Controller) creationObserved(key, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending[key], node)
}

func (c *Controller) creationPending(key, node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.pending[key][node]
	return ok && c.clock.Since(at) < creationTimeout
}

// sync reconciles one DaemonSet. It is never called twice at once for a
// key.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ds, err := c.dsLister.DaemonSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("get daemonset %s: %w", key, err)
	}
	ds = ds.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		c.log.Error("daemonset has an invalid selector", "daemonset", key, "err", err)
		return nil
	}
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	byNode, err := c.podsByNode(ds, selector)
	if err != nil {
		return err
	}
	collisionCount := int32(0)
	if ds.Status.CollisionCount != nil {
		collisionCount = *ds.Status.CollisionCount
	}
	_, hash, err := c.revisions(ctx, ds, byNode, &collisionCount)
	if err != nil {
		return err
	}
	var manageErr error
	if ds.DeletionTimestamp == nil {
		manageErr = c.manage(ctx, key, ds, nodes, byNode, hash)
		if manageErr == nil && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			manageErr = c.rollingUpdate(ctx, ds, nodes, byNode, hash)
		}
	}
	status := c.status(ds, nodes, byNode, hash, collisionCount)
	if err := c.updateStatus(ctx, ds, status); err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && ds.Spec.MinReadySeconds > 0 && status.NumberAvailable < status.NumberReady {
		return &controllers.RequeueAfter{Delay: time.Duration(ds.Spec.MinReadySeconds) * time.Second}
	}
	return manageErr
}

// podsByNode returns the pods ds controls, by the node each targets.
func (c *Controller) podsByNode(ds *appsv1.DaemonSet, selector labels.Selector) (map[string][]*corev1.Pod, error) {
	pods, err := c.podLister.Pods(ds.Namespace).List(selector)
	if err != nil {
		return nil, fmt.Errorf("list pods of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if !metav1.IsControlledBy(p, ds) {
			continue
		}
		if n := targetNode(p); n != "" {
			out[n] = append(out[n], p)
		}
	}
	return out, nil
}

// updateStatus writes status if it differs from ds's.
func (c *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, st appsv1.DaemonSetStatus) error {
	o := ds.Status
	if o.ObservedGeneration == st.ObservedGeneration && o.DesiredNumberScheduled == st.DesiredNumberScheduled &&
		o.CurrentNumberScheduled == st.CurrentNumberScheduled && o.NumberMisscheduled == st.NumberMisscheduled &&
		o.NumberReady == st.NumberReady && o.UpdatedNumberScheduled == st.UpdatedNumberScheduled &&
		o.NumberAvailable == st.NumberAvailable && o.NumberUnavailable == st.NumberUnavailable &&
		o.CollisionCount != nil && *o.CollisionCount == *st.CollisionCount {
		return nil
	}
	ds.Status = st
	_, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, ds, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update status of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return nil
}
