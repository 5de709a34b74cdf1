// Package deployment is minik's Deployment controller. It behaves as
// kube-controller-manager's: each Deployment owns ReplicaSets named
// <deployment>-<pod-template-hash>, one per pod template it has had, and
// the controller moves replicas from the old ones to the new one following
// the Deployment's strategy (RollingUpdate within maxSurge/maxUnavailable,
// or Recreate), scales them proportionally when the Deployment is resized
// mid-rollout, leaves a paused Deployment's rollout where it is, deletes
// old ReplicaSets beyond revisionHistoryLimit, and reports status and the
// Progressing/Available conditions, enforcing progressDeadlineSeconds.
//
// It is a client of the API server like any other: shared informers on
// Deployments, ReplicaSets and Pods feed a rate-limited workqueue keyed by
// namespace/name, and every change is an API write.
package deployment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Component is the event source of the controller.
const Component = "deployment-controller"

// Event reasons, as kube's deployment controller reports them.
const (
	// EventScalingReplicaSet is recorded on a Deployment when one of its
	// ReplicaSets is resized ("Scaled up replica set web-6d4cf56db6 from 0
	// to 3").
	EventScalingReplicaSet = "ScalingReplicaSet"
	// EventSelectingAll is recorded (Warning) on a Deployment whose
	// selector is empty.
	EventSelectingAll = "SelectingAll"
)

// maxRetries is how many times a failing Deployment is retried (with
// exponential back-off) before it is dropped until its next change.
const maxRetries = 15

// controllerKind is the kind of the ReplicaSets' controller references.
var controllerKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Controller reconciles Deployments.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.WithTicker
	logger   *slog.Logger

	dLister   appslisters.DeploymentLister
	dSynced   cache.InformerSynced
	rsLister  appslisters.ReplicaSetLister
	rsIndexer cache.Indexer
	rsSynced  cache.InformerSynced
	podLister corelisters.PodLister
	podSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the Deployment controller from the controller manager's
// context, registering its informers (Deployments, ReplicaSets, Pods). It
// has the controllers.Constructor signature.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewController(cc)
}

// NewController is New with the concrete type.
func NewController(cc *controllers.Context) (*Controller, error) {
	switch {
	case cc == nil:
		return nil, errors.New("deployment controller: a controller context is required")
	case cc.Client == nil:
		return nil, errors.New("deployment controller: a client is required")
	case cc.Informers == nil:
		return nil, errors.New("deployment controller: an informer factory is required")
	case cc.Recorder == nil:
		return nil, errors.New("deployment controller: an event recorder is required")
	}
	clk := cc.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	logger := cc.Logger
	if logger == nil {
		logger = slog.Default()
	}
	dInf := cc.Informers.Apps().V1().Deployments()
	rsInf := cc.Informers.Apps().V1().ReplicaSets()
	podInf := cc.Informers.Core().V1().Pods()
	c := &Controller{
		client:    cc.Client,
		recorder:  cc.Recorder(Component),
		clock:     clk,
		logger:    logger,
		dLister:   dInf.Lister(),
		dSynced:   dInf.Informer().HasSynced,
		rsLister:  rsInf.Lister(),
		rsIndexer: rsInf.Informer().GetIndexer(),
		rsSynced:  rsInf.Informer().HasSynced,
		podLister: podInf.Lister(),
		podSynced: podInf.Informer().HasSynced,
		queue:     controllers.NewQueue[string]("deployment", clk, nil),
	}
	if _, err := dInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addDeployment,
		UpdateFunc: c.updateDeployment,
		DeleteFunc: c.deleteDeployment,
	}); err != nil {
		return nil, fmt.Errorf("deployment controller: deployment handler: %w", err)
	}
	if _, err := rsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addReplicaSet,
		UpdateFunc: c.updateReplicaSet,
		DeleteFunc: c.deleteReplicaSet,
	}); err != nil {
		return nil, fmt.Errorf("deployment controller: replicaset handler: %w", err)
	}
	if err := rsInf.Informer().AddIndexers(cache.Indexers{rsOwnerIndex: indexReplicaSetByOwner}); err != nil {
		return nil, fmt.Errorf("deployment controller: index replicasets: %w", err)
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, fmt.Errorf("deployment controller: pod handler: %w", err)
	}
	return c, nil
}

// Run reconciles Deployments with the given number of workers until ctx is
// done, then shuts the queue down and returns once every worker has
// finished its current item.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.dSynced, c.rsSynced, c.podSynced) {
		return
	}
	c.logger.Info("starting deployment controller", "workers", max(workers, 1))
	controllers.Workers[string]{
		Queue:      c.queue,
		Reconcile:  c.reconcile,
		MaxRetries: maxRetries,
		OnError: func(key string, err error) {
			c.logger.Debug("error syncing deployment, retrying", "deployment", key, "err", err)
		},
	}.Run(ctx, workers)
	c.logger.Info("deployment controller stopped")
}

// reconcile syncs one Deployment. Writes refused because its namespace is
// going away are not retried: the namespace controller deletes it.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	err := c.syncDeployment(ctx, key)
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil
	}
	return err
}

func (c *Controller) enqueue(d *appsv1.Deployment) {
	key, err := cache.MetaNamespaceKeyFunc(d)
	if err != nil {
		c.logger.Error("cannot key deployment", "err", err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueueRateLimited(d *appsv1.Deployment) {
	key, err := cache.MetaNamespaceKeyFunc(d)
	if err != nil {
		c.logger.Error("cannot key deployment", "err", err)
		return
	}
	c.queue.AddRateLimited(key)
}

func (c *Controller) enqueueAfter(d *appsv1.Deployment, after time.Duration) {
	key, err := cache.MetaNamespaceKeyFunc(d)
	if err != nil {
		c.logger.Error("cannot key deployment", "err", err)
		return
	}
	c.queue.AddAfter(key, after)
}

func (c *Controller) addDeployment(obj interface{}) {
	if d, ok := obj.(*appsv1.Deployment); ok {
		c.enqueue(d)
	}
}

func (c *Controller) updateDeployment(_, cur interface{}) {
	if d, ok := cur.(*appsv1.Deployment); ok {
		c.enqueue(d)
	}
}

func (c *Controller) deleteDeployment(obj interface{}) {
	d, ok := controllers.Deleted[*appsv1.Deployment](obj)
	if !ok {
		return
	}
	c.enqueue(d)
}

// addReplicaSet wakes the Deployment that controls a new ReplicaSet, or,
// for an orphan, every Deployment that could adopt it.
func (c *Controller) addReplicaSet(obj interface{}) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return
	}
	if rs.DeletionTimestamp != nil {
		// Seen for the first time while already being deleted (a restart).
		c.deleteReplicaSet(rs)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
			c.enqueue(d)
		}
		return
	}
	for _, d := range c.deploymentsForReplicaSet(rs) {
		c.enqueue(d)
	}
}

// updateReplicaSet wakes the old and the new controller of a changed
// ReplicaSet, or, for an orphan whose labels changed, every Deployment
// that could adopt it.
func (c *Controller) updateReplicaSet(old, cur interface{}) {
	oldRS, ok1 := old.(*appsv1.ReplicaSet)
	curRS, ok2 := cur.(*appsv1.ReplicaSet)
	if !ok1 || !ok2 || curRS.ResourceVersion == oldRS.ResourceVersion {
		// A resync: nothing changed.
		return
	}
	curRef := metav1.GetControllerOfNoCopy(curRS)
	oldRef := metav1.GetControllerOfNoCopy(oldRS)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := c.resolveControllerRef(oldRS.Namespace, oldRef); d != nil {
			c.enqueue(d)
		}
	}
	if curRef != nil {
		if d := c.resolveControllerRef(curRS.Namespace, curRef); d != nil {
			c.enqueue(d)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(curRS.Labels, oldRS.Labels) {
		for _, d := range c.deploymentsForReplicaSet(curRS) {
			c.enqueue(d)
		}
	}
}

func (c *Controller) deleteReplicaSet(obj interface{}) {
	rs, ok := controllers.Deleted[*appsv1.ReplicaSet](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(rs)
	if ref == nil {
		return
	}
	if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
		c.enqueue(d)
	}
}

// deletePod wakes a Recreate Deployment once the last of its pods is gone:
// that is when it may scale its new ReplicaSet up.
func (c *Controller) deletePod(obj interface{}) {
	pod, ok := controllers.Deleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	d := c.deploymentForPod(pod)
	if d == nil || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		return
	}
	rsList, err := c.ownedReplicaSets(d)
	if err != nil {
		return
	}
	podMap, err := c.podMapForDeployment(d, rsList)
	if err != nil {
		return
	}
	for _, pods := range podMap {
		if len(pods) > 0 {
			return
		}
	}
	c.enqueue(d)
}

// resolveControllerRef returns the Deployment a controller reference
// names, if it is still the same object (same UID).
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.Deployment {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	d, err := c.dLister.Deployments(namespace).Get(ref.Name)
	if err != nil || d.UID != ref.UID {
		return nil
	}
	return d
}

// deploymentsForReplicaSet returns the Deployments whose selector matches
// the ReplicaSet's labels; more than one is a user error the controller
// references keep harmless.
func (c *Controller) deploymentsForReplicaSet(rs *appsv1.ReplicaSet) []*appsv1.Deployment {
	if len(rs.Labels) == 0 {
		return nil
	}
	all, err := c.dLister.Deployments(rs.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*appsv1.Deployment
	for _, d := range all {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(rs.Labels)) {
			continue
		}
		out = append(out, d)
	}
	if len(out) > 1 {
		c.logger.Debug("more than one deployment selects a replica set", "replicaset", rs.Namespace+"/"+rs.Name)
	}
	return out
}

// deploymentForPod follows a pod's controller reference to its ReplicaSet
// and that one's to its Deployment.
func (c *Controller) deploymentForPod(pod *corev1.Pod) *appsv1.Deployment {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return nil
	}
	rs, err := c.rsLister.ReplicaSets(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	ref = metav1.GetControllerOfNoCopy(rs)
	if ref == nil {
		return nil
	}
	return c.resolveControllerRef(rs.Namespace, ref)
}

// ownedReplicaSets lists, from the cache, the ReplicaSets that d's
// selector matches and d controls, without adopting or releasing any.
func (c *Controller) ownedReplicaSets(d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s: invalid selector: %w", d.Namespace, d.Name, err)
	}
	all, err := c.rsLister.ReplicaSets(d.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ReplicaSet
	for _, rs := range all {
		if metav1.IsControlledBy(rs, d) {
			out = append(out, rs)
		}
	}
	return out, nil
}

// podMapForDeployment groups the pods d's selector matches by the
// ReplicaSet (of rsList) that controls them. Inactive pods are kept: a
// Recreate rollout waits until no old pod runs.
func (c *Controller) podMapForDeployment(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (map[types.UID][]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s: invalid selector: %w", d.Namespace, d.Name, err)
	}
	pods, err := c.podLister.Pods(d.Namespace).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list pods of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	podMap := make(map[types.UID][]*corev1.Pod, len(rsList))
	for _, rs := range rsList {
		podMap[rs.UID] = nil
	}
	for _, pod := range pods {
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref == nil {
			continue
		}
		if _, ok := podMap[ref.UID]; ok {
			podMap[ref.UID] = append(podMap[ref.UID], pod)
		}
	}
	return podMap, nil
}

// syncDeployment reconciles the Deployment with the given key. It is never
// called concurrently for one key (the workqueue guarantees it).
func (c *Controller) syncDeployment(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		c.logger.Error("invalid deployment key", "key", key, "err", err)
		return nil
	}
	cached, err := c.dLister.Deployments(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get deployment %s: %w", key, err)
	}
	// The lister's object is shared with every other reader: work on a copy.
	d := cached.DeepCopy()

	if reflect.DeepEqual(d.Spec.Selector, &metav1.LabelSelector{}) {
		c.recorder.Eventf(d, corev1.EventTypeWarning, EventSelectingAll, "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			if _, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update status of deployment %s: %w", key, err)
			}
		}
		return nil
	}

	rsList, err := c.claimReplicaSets(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return c.syncStatusOnly(ctx, d, rsList)
	}
	// A paused or resumed Deployment gets an Unknown Progressing condition,
	// so that the time spent paused never counts against its deadline.
	if err := c.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return c.sync(ctx, d, rsList)
	}
	scaling, err := c.isScalingEvent(ctx, d, rsList)
	if err != nil {
		return err
	}
	if scaling {
		return c.sync(ctx, d, rsList)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		// Only Recreate looks at pods (are the old ones all gone?).
		podMap, err := c.podMapForDeployment(d, rsList)
		if err != nil {
			return err
		}
		return c.rolloutRecreate(ctx, d, rsList, podMap)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return c.rolloutRolling(ctx, d, rsList)
	}
	return fmt.Errorf("deployment %s: unexpected deployment strategy type: %s", key, d.Spec.Strategy.Type)
}
