// Package resourcequota is minik's ResourceQuota controller. It behaves as
// kube-controller-manager's: it keeps each quota's status.hard equal to its
// spec.hard and recomputes status.used from the objects of the quota's
// namespace, with the same evaluators the ResourceQuota admission plugin
// charges requests with (internal/admission/quota).
//
// Admission charges usage when objects are created; this controller gives
// it back. A quota is recomputed when its spec changes or it lacks a usage
// figure, when an object it counts is deleted (or a pod finishes, or a
// service changes type), and every resync period (five minutes, as kube's
// --resource-quota-sync-period), which also corrects charges for requests
// refused after admission.
package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/admission/quota"
	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "resourcequota"

// DefaultResyncPeriod is how often every quota is recomputed.
const DefaultResyncPeriod = 5 * time.Minute

// maxRetries is how many times a failing quota is retried (with back-off)
// before it waits for its next change or resync.
const maxRetries = 15

// informerSyncWait bounds the wait for an informer started on demand (for
// a "count/<resource>" the controller had not watched yet).
const informerSyncWait = 30 * time.Second

// Controller keeps ResourceQuota status right.
type Controller struct {
	client    kubernetes.Interface
	informers informers.SharedInformerFactory
	clock     clock.WithTicker
	logger    *slog.Logger
	registry  *quota.Registry
	resync    time.Duration

	quotaLister corelisters.ResourceQuotaLister
	quotaSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// ctx is Run's, for informers started on demand.
	ctx context.Context
	// watched are the resources whose informer feeds replenishment.
	watched map[schema.GroupResource]informers.GenericInformer
}

// New builds the controller from the controller manager's context. It has
// the controllers.Constructor signature.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewController(cc, DefaultResyncPeriod)
}

// NewController is New with the concrete type and a resync period.
func NewController(cc *controllers.Context, resync time.Duration) (*Controller, error) {
	switch {
	case cc == nil:
		return nil, errors.New("resourcequota controller: a controller context is required")
	case cc.Client == nil:
		return nil, errors.New("resourcequota controller: a client is required")
	case cc.Informers == nil:
		return nil, errors.New("resourcequota controller: an informer factory is required")
	}
	clk := cc.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	logger := cc.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if resync <= 0 {
		resync = DefaultResyncPeriod
	}
	qInf := cc.Informers.Core().V1().ResourceQuotas()
	c := &Controller{
		client:      cc.Client,
		informers:   cc.Informers,
		clock:       clk,
		logger:      logger,
		registry:    quota.NewRegistry(clk),
		resync:      resync,
		quotaLister: qInf.Lister(),
		quotaSynced: qInf.Informer().HasSynced,
		queue:       controllers.NewQueue[string](Name, clk, nil),
		watched:     map[schema.GroupResource]informers.GenericInformer{},
	}
	if _, err := qInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { c.enqueueQuota(obj) },
		UpdateFunc: func(old, cur interface{}) {
			o, ok1 := old.(*corev1.ResourceQuota)
			n, ok2 := cur.(*corev1.ResourceQuota)
			// Status writes are this controller's (and admission's); only a
			// new spec, or a status that lost its figures, needs work.
			if ok1 && ok2 && quota.Equals(o.Spec.Hard, n.Spec.Hard) && !needsSync(n) {
				return
			}
			c.enqueueQuota(cur)
		},
	}); err != nil {
		return nil, fmt.Errorf("resourcequota controller: quota handler: %w", err)
	}
	// Pods and Services are watched from the start; other counted
	// resources when a quota first counts them.
	for _, gr := range []schema.GroupResource{{Resource: "pods"}, {Resource: "services"}} {
		if _, err := c.watch(gr); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// needsSync tells whether a quota's status lacks what admission needs.
func needsSync(q *corev1.ResourceQuota) bool {
	if !quota.Equals(q.Spec.Hard, q.Status.Hard) {
		return true
	}
	for name := range q.Status.Hard {
		if _, ok := q.Status.Used[name]; !ok {
			return true
		}
	}
	return false
}

// Run recomputes quotas with the given number of workers until ctx is
// done, then shuts the queue down and returns once every worker has
// finished its current item.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	c.mu.Lock()
	c.ctx = ctx
	synced := []cache.InformerSynced{c.quotaSynced}
	for _, inf := range c.watched {
		synced = append(synced, inf.Informer().HasSynced)
	}
	c.mu.Unlock()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	if workers <= 0 {
		workers = 1
	}
	c.logger.Info("starting resourcequota controller", "workers", workers)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := c.clock.NewTicker(c.resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
				c.enqueueAll()
			}
		}
	}()
	controllers.Workers[string]{
		Queue:      c.queue,
		Reconcile:  c.syncQuota,
		MaxRetries: maxRetries,
		OnError: func(key string, err error) {
			c.logger.Debug("error syncing quota, retrying", "quota", key, "err", err)
		},
	}.Run(ctx, workers)
	wg.Wait()
	c.logger.Info("resourcequota controller stopped")
}

func (c *Controller) enqueueQuota(obj interface{}) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		c.logger.Error("cannot key quota", "err", err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueueAll() {
	qs, err := c.quotaLister.List(labels.Everything())
	if err != nil {
		c.logger.Error("list quotas", "err", err)
		return
	}
	for _, q := range qs {
		c.enqueueQuota(q)
	}
}

// replenish queues the quotas of a namespace that count a resource, after
// an object of it went away or stopped counting.
func (c *Controller) replenish(gr schema.GroupResource, namespace string) {
	qs, err := c.quotaLister.ResourceQuotas(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	e := c.registry.Get(gr)
	for _, q := range qs {
		if len(e.MatchingResources(quota.ResourceNames(q.Status.Hard))) > 0 {
			c.enqueueQuota(q)
		}
	}
}

// watch returns the informer of a resource, registering it (and its
// replenishment handlers) on first use.
func (c *Controller) watch(gr schema.GroupResource) (informers.GenericInformer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf, ok := c.watched[gr]; ok {
		return inf, nil
	}
	gvr, err := preferredVersion(gr)
	if err != nil {
		return nil, err
	}
	inf, err := c.informers.ForResource(gvr)
	if err != nil {
		return nil, fmt.Errorf("resourcequota controller: no informer for %s: %w", gr, err)
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur interface{}) {
			if changedUsage(c.registry.Get(gr), old, cur) {
				c.replenish(gr, namespaceOf(cur))
			}
		},
		DeleteFunc: func(obj interface{}) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			c.replenish(gr, namespaceOf(obj))
		},
	}); err != nil {
		return nil, fmt.Errorf("resourcequota controller: %s handler: %w", gr, err)
	}
	c.watched[gr] = inf
	if c.ctx != nil {
		// Running already: start the new informer.
		c.informers.Start(c.ctx.Done())
	}
	return inf, nil
}

// preferredVersion finds the version a resource is listed in.
func preferredVersion(gr schema.GroupResource) (schema.GroupVersionResource, error) {
	versions := scheme.Scheme.PrioritizedVersionsForGroup(gr.Group)
	if len(versions) == 0 {
		return schema.GroupVersionResource{}, fmt.Errorf("resourcequota controller: unknown API group %q", gr.Group)
	}
	return versions[0].WithResource(gr.Resource), nil
}

func namespaceOf(obj interface{}) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetNamespace()
}

// changedUsage tells whether an update changed what an object charges (a
// pod that finished, a service that changed type).
func changedUsage(e quota.Evaluator, old, cur interface{}) bool {
	o, ok1 := old.(runtime.Object)
	n, ok2 := cur.(runtime.Object)
	if !ok1 || !ok2 {
		return false
	}
	ou, err1 := e.Usage(o)
	nu, err2 := e.Usage(n)
	return err1 == nil && err2 == nil && !quota.Equals(ou, nu)
}

// list returns the objects of a resource in a namespace from its informer,
// starting it (and waiting for it) on first use.
func (c *Controller) list(gr schema.GroupResource, namespace string) ([]runtime.Object, error) {
	inf, err := c.watch(gr)
	if err != nil {
		return nil, err
	}
	if !inf.Informer().HasSynced() {
		ctx, cancel := context.WithTimeout(context.Background(), informerSyncWait)
		defer cancel()
		if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
			return nil, fmt.Errorf("informer for %s did not sync", gr)
		}
	}
	return inf.Lister().ByNamespace(namespace).List(labels.Everything())
}

// syncQuota recomputes one quota and writes its status when it changed.
func (c *Controller) syncQuota(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.quotaLister.ResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	q := cached.DeepCopy()
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)
	used := quota.Add(corev1.ResourceList{}, q.Status.Used)
	fresh, calcErr := quota.CalculateUsage(q, c.registry, c.list)
	for k, v := range fresh {
		used[k] = v
	}
	used = quota.Mask(used, quota.ResourceNames(hard))
	if quota.Equals(hard, q.Status.Hard) && quota.Equals(used, q.Status.Used) {
		return calcErr
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	if _, err := c.client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("update status of quota %s: %w", key, err)
	}
	return calcErr
}
