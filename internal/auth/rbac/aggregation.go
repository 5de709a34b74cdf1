package rbac

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// AggregationController keeps the rules of every ClusterRole with an
// aggregationRule equal to the union of the rules of the ClusterRoles its
// selectors match, as kube's clusterrole-aggregation controller does. Any
// ClusterRole change requeues every aggregated role.
type AggregationController struct {
	client kubernetes.Interface
	lister rbaclisters.ClusterRoleLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	log    *slog.Logger
}

// NewAggregationController registers a ClusterRole informer with f; the
// caller starts f, then Run.
func NewAggregationController(f informers.SharedInformerFactory, client kubernetes.Interface, log *slog.Logger) (*AggregationController, error) {
	if log == nil {
		log = slog.Default()
	}
	inf := f.Rbac().V1().ClusterRoles()
	c := &AggregationController{
		client: client,
		lister: inf.Lister(),
		synced: inf.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "clusterrole-aggregation"}),
		log: log,
	}
	requeue := func(any) { c.enqueueAll() }
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    requeue,
		UpdateFunc: func(_, obj any) { requeue(obj) },
		DeleteFunc: requeue,
	}); err != nil {
		return nil, fmt.Errorf("clusterrole aggregation: %w", err)
	}
	return c, nil
}

func (c *AggregationController) enqueueAll() {
	roles, err := c.lister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, r := range roles {
		if r.AggregationRule != nil {
			c.queue.Add(r.Name)
		}
	}
}

// Run reconciles until ctx is done.
func (c *AggregationController) Run(ctx context.Context) {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for c.processNext(ctx) {
		}
	}, time.Second)
	<-ctx.Done()
}

func (c *AggregationController) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("aggregate clusterrole", "clusterrole", key, "err", err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

func (c *AggregationController) sync(ctx context.Context, name string) error {
	role, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if role.AggregationRule == nil {
		return nil
	}
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	rules, err := AggregatedRules(role, all)
	if err != nil {
		// A selector that does not parse cannot be fixed by a retry.
		c.log.Warn("aggregate clusterrole: bad selector", "clusterrole", name, "err", err)
		return nil
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	next := role.DeepCopy()
	next.Rules = rules
	_, err = c.client.RbacV1().ClusterRoles().Update(ctx, next, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("update clusterrole %s: %w", name, err)
	}
	return err
}
