// Package replicaset is the ReplicaSet controller: it keeps the number of
// pods a ReplicaSet selects equal to spec.replicas, creating pods from the
// template and deleting those least far along first, and reports the
// ReplicaSet's status, as kube-controller-manager's controller of that name
// does.
//
// It watches ReplicaSets and Pods through the shared informers and
// reconciles from a rate-limited workqueue keyed by namespace/name. Pod
// creations and deletions it has made but not yet seen in its informer are
// remembered (expectations), so that a slow watch never makes it create or
// delete twice.
//
// The same controller keeps core/v1 ReplicationControllers (NewReplication,
// kube's "replicationcontroller"): as kube's replication manager, it
// converts them to ReplicaSets on the way in and back on the way out
// (workload), so there is one sync loop for both kinds.
package replicaset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubectl/pkg/util/podutils"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "replicaset"

// Component is the source of the controller's events.
const Component = "replicaset-controller"

// ReplicationName is the name in --controllers of the same controller
// serving core/v1 ReplicationControllers, as kube-controller-manager's
// "replicationcontroller".
const ReplicationName = "replicationcontroller"

// ReplicationComponent is the source of its events.
const ReplicationComponent = "replication-controller"

// Event reasons, and the ReplicaFailure condition's reasons.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
)

const (
	// burstReplicas bounds the pods created or deleted in one sync.
	burstReplicas = 500
	// slowStartInitialBatchSize is the first batch of creations; each
	// batch that fully succeeds doubles the next.
	slowStartInitialBatchSize = 1
	// controllerUIDIndex indexes ReplicaSets by their controller's UID.
	controllerUIDIndex = "replicaset.controllerUID"
	// podOwnerIndex indexes pods by their controller's UID, and orphans by
	// orphanKey(namespace), as kube's FilterPodsByOwner finds them.
	podOwnerIndex = "replicaset.podOwner"
)

// Controller is the ReplicaSet controller, or the replication controller:
// the same controller over another workload.
type Controller struct {
	w        *workload
	client   kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.WithTicker
	log      *slog.Logger

	rsSynced   cache.InformerSynced
	rsIndexer  cache.Indexer
	podLister  corelisters.PodLister
	podIndexer cache.Indexer
	podsSynced cache.InformerSynced

	expectations *controllers.Expectations
	queue        workqueue.TypedRateLimitingInterface[string]

	// written holds, by key, the ReplicaSet as this controller's last
	// status write left it, until the cache shows a newer version.
	written writtenStatus
}

// New builds the ReplicaSet controller on cc's shared ReplicaSet and Pod
// informers. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return newWorkloadController(cc, replicaSets(cc), Name, Component)
}

// NewReplication builds the replication controller: the same controller
// over core/v1 ReplicationControllers, on cc's shared ReplicationController
// and Pod informers, as kube's replication manager wraps its ReplicaSet
// controller. It implements controllers.Constructor.
func NewReplication(cc *controllers.Context) (controllers.Controller, error) {
	return newWorkloadController(cc, replicationControllers(cc), "replicationmanager", ReplicationComponent)
}

func indexByControllerUID(obj interface{}) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return nil, nil
	}
	return []string{string(ref.UID)}, nil
}

// indexPodByOwner is podOwnerIndex's function.
func indexPodByOwner(obj interface{}) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{orphanKey(pod.Namespace)}, nil
}

// orphanKey is the podOwnerIndex key of the pods of namespace that no
// controller owns (a UID is never empty, nor contains a slash).
func orphanKey(namespace string) string { return "orphan/" + namespace }

// podsOf returns, from the cache, the pods rs controls and the orphans of
// its namespace: the only ones it may keep, release or adopt. An index
// finds them, where listing the namespace would cost every sync time in
// proportion to all its pods.
func (c *Controller) podsOf(rs *appsv1.ReplicaSet) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, key := range []string{string(rs.UID), orphanKey(rs.Namespace)} {
		objs, err := c.podIndexer.ByIndex(podOwnerIndex, key)
		if err != nil {
			return nil, fmt.Errorf("pods of %s %s/%s: %w", c.w.noun, rs.Namespace, rs.Name, err)
		}
		for _, o := range objs {
			if pod, ok := o.(*corev1.Pod); ok && pod.Namespace == rs.Namespace {
				out = append(out, pod)
			}
		}
	}
	return out, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.rsSynced, c.podsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("sync failed, will retry", c.w.noun, key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(rs *appsv1.ReplicaSet) {
	key, err := cache.MetaNamespaceKeyFunc(rs)
	if err != nil {
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueueAfter(rs *appsv1.ReplicaSet, d time.Duration) {
	key, err := cache.MetaNamespaceKeyFunc(rs)
	if err != nil {
		return
	}
	c.queue.AddAfter(key, d)
}

func (c *Controller) addRS(obj interface{}) {
	if rs, ok := c.w.toRS(obj); ok {
		c.enqueue(rs)
	}
}

func (c *Controller) updateRS(oldObj, newObj interface{}) {
	oldRS, ok := c.w.toRS(oldObj)
	curRS, ok2 := c.w.toRS(newObj)
	if !ok || !ok2 {
		return
	}
	if oldRS.UID != curRS.UID {
		// Deleted and recreated under the same name between two events.
		key, _ := cache.MetaNamespaceKeyFunc(oldRS)
		c.deleteRS(cache.DeletedFinalStateUnknown{Key: key, Obj: oldObj})
	}
	// Every update is synced, not only spec changes: a resync then retries
	// ReplicaSets whose last creations failed.
	c.enqueue(curRS)
}

func (c *Controller) deleteRS(obj interface{}) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	rs, ok := c.w.toRS(obj)
	if !ok {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(rs)
	if err != nil {
		return
	}
	// A ReplicaSet created again under this name starts clean.
	c.expectations.Forget(key)
	c.queue.Add(key)
}

// resolveControllerRef returns the object of the workload's kind ref
// names, if it is one and still the same object (same UID).
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref.Kind != c.w.kind.Kind {
		return nil
	}
	rs := c.cached(namespace, ref.Name)
	if rs == nil || rs.UID != ref.UID {
		return nil
	}
	return rs
}

// podReplicaSets returns the objects whose selector matches an orphan
// pod, which may want to adopt it. A nil or empty selector matches
// nothing, as in kube's listers.
func (c *Controller) podReplicaSets(pod *corev1.Pod) []*appsv1.ReplicaSet {
	objs, err := c.rsIndexer.ByIndex(cache.NamespaceIndex, pod.Namespace)
	if err != nil {
		return nil
	}
	var rss []*appsv1.ReplicaSet
	for _, o := range objs {
		rs, ok := c.w.toRS(o)
		if !ok {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || selector.Empty() || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		rss = append(rss, rs)
	}
	if len(rss) > 1 {
		c.log.Warn("more than one "+c.w.kind.Kind+" selects a pod", "pod", pod.Namespace+"/"+pod.Name, "labels", pod.Labels)
	}
	return rss
}

func (c *Controller) addPod(obj interface{}) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		// Seen first already being deleted (after a restart, say): this is
		// no creation to observe.
		c.deletePod(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		rs := c.resolveControllerRef(pod.Namespace, ref)
		if rs == nil {
			return
		}
		key, _ := cache.MetaNamespaceKeyFunc(rs)
		c.expectations.CreationObserved(key)
		c.queue.Add(key)
		return
	}
	// An orphan: wake whoever may adopt it. No creation is observed, since
	// no ReplicaSet created it.
	for _, rs := range c.podReplicaSets(pod) {
		c.enqueue(rs)
	}
}

func (c *Controller) updatePod(oldObj, newObj interface{}) {
	oldPod, curPod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	if curPod.ResourceVersion == oldPod.ResourceVersion {
		return
	}
	labelsChanged := !reflect.DeepEqual(curPod.Labels, oldPod.Labels)
	if curPod.DeletionTimestamp != nil {
		// A graceful deletion starts: the ReplicaSet replaces the pod now,
		// not when its kubelet finally removes it.
		c.deletePod(curPod)
		if labelsChanged {
			c.deletePod(oldPod)
		}
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(curPod), metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := c.resolveControllerRef(oldPod.Namespace, oldRef); rs != nil {
			c.enqueue(rs)
		}
	}
	if curRef != nil {
		rs := c.resolveControllerRef(curPod.Namespace, curRef)
		if rs == nil {
			return
		}
		c.enqueue(rs)
		if !podutils.IsPodReady(oldPod) && podutils.IsPodReady(curPod) && rs.Spec.MinReadySeconds > 0 {
			// Look again once the pod may count as available (a second
			// more absorbs clock granularity).
			c.enqueueAfter(rs, time.Duration(rs.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, rs := range c.podReplicaSets(curPod) {
			c.enqueue(rs)
		}
	}
}

func (c *Controller) deletePod(obj interface{}) {
	pod, ok := controllers.Deleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	rs := c.resolveControllerRef(pod.Namespace, ref)
	if rs == nil {
		return
	}
	key, _ := cache.MetaNamespaceKeyFunc(rs)
	c.expectations.DeletionObserved(key, pod.Namespace+"/"+pod.Name)
	c.queue.Add(key)
}

// sync reconciles one ReplicaSet: it claims the pods it should own, creates
// or deletes pods when no earlier creation or deletion is still unseen,
// and writes the status. It is never called twice at once for a key.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	rs := c.cached(namespace, name)
	if rs == nil {
		c.expectations.Forget(key)
		c.written.forget(key)
		return nil
	}
	// A status written by the last sync that the cache has not shown yet:
	// start from it, or this sync's write would conflict (and cost a read
	// and a second write).
	rs = c.written.newest(key, rs)
	needsSync := c.expectations.Satisfied(key)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		// No retry fixes a selector: report it once and wait for an edit.
		c.log.Error(c.w.noun+" has an invalid selector", c.w.noun, key, "err", err)
		return nil
	}
	// Our pods whatever their labels, to also release those that no longer
	// match the selector, and the orphans we may adopt.
	all, err := c.podsOf(rs)
	if err != nil {
		return err
	}
	var active, terminating []*corev1.Pod
	for _, p := range all {
		if isPodActive(p) {
			active = append(active, p)
		} else if isPodTerminating(p) && isControlledBy(p, rs.UID) && selector.Matches(labels.Set(p.Labels)) {
			terminating = append(terminating, p)
		}
	}
	active, err = c.claimPods(ctx, rs, selector, active)
	if err != nil {
		return err
	}
	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, key, active, rs)
	}
	now := c.clock.Now()
	status := calculateStatus(rs, active, terminating, manageErr, now)
	if !c.w.terminatingReplicas {
		status.TerminatingReplicas = nil
	}
	updated, err := updateStatus(ctx, c.w, rs.DeepCopy(), status)
	if err != nil {
		return errors.Join(manageErr, err)
	}
	if updated.ResourceVersion != rs.ResourceVersion {
		c.written.remember(key, rs.ResourceVersion, updated)
	}
	// Look again when the ready pods should have become available.
	if manageErr == nil && updated.Spec.MinReadySeconds > 0 &&
		int(updated.Status.ReadyReplicas) == replicas(updated) &&
		int(updated.Status.AvailableReplicas) != replicas(updated) {
		c.queue.AddAfter(key, time.Duration(updated.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

// manageReplicas creates or deletes pods until rs has spec.replicas active
// ones, at most burstReplicas at a time. It returns the first error met;
// pods it did not get to are left for the retry.
func (c *Controller) manageReplicas(ctx context.Context, key string, active []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	diff := len(active) - replicas(rs)
	switch {
	case diff < 0:
		n := min(-diff, burstReplicas)
		c.expectations.ExpectCreations(key, n)
		c.log.Debug("too few replicas", c.w.noun, key, "need", replicas(rs), "creating", n)
		created, err := controllers.SlowStartBatch(n, slowStartInitialBatchSize, func() error { return c.createPod(ctx, rs) })
		// Creations never attempted, or refused, will never be observed.
		for i := created; i < n; i++ {
			c.expectations.CreationObserved(key)
		}
		return err
	case diff > 0:
		n := min(diff, burstReplicas)
		c.log.Debug("too many replicas", c.w.noun, key, "need", replicas(rs), "deleting", n)
		victims := podsToDelete(active, c.relatedPods(rs), n, c.clock.Now())
		podKeys := make([]string, len(victims))
		for i, p := range victims {
			podKeys[i] = p.Namespace + "/" + p.Name
		}
		c.expectations.ExpectDeletions(key, podKeys)
		errs := make([]error, len(victims))
		var wg sync.WaitGroup
		for i, p := range victims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.deletePodOf(ctx, rs, p.Name); err != nil {
					// This deletion will never be observed.
					c.expectations.DeletionObserved(key, podKeys[i])
					if !apierrors.IsNotFound(err) {
						errs[i] = err
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// createPod creates one pod of rs. A refusal is returned as the API
// server's error, unwrapped: its message becomes the ReplicaFailure
// condition's, as on a real cluster.
func (c *Controller) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	pod := podFromTemplate(&rs.Spec.Template, rs.Name, metav1.NewControllerRef(rs, c.w.kind))
	if len(pod.Labels) == 0 {
		return errors.New("unable to create pods, no labels")
	}
	created, err := c.client.CoreV1().Pods(rs.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// Every creation would fail until the namespace is gone; kube
			// neither reports nor retries this.
			return nil
		}
		c.recorder.Eventf(c.w.object(rs), corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		return err
	}
	c.log.Debug("created pod", c.w.noun, rs.Namespace+"/"+rs.Name, "pod", created.Name)
	c.recorder.Eventf(c.w.object(rs), corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %v", created.Name)
	return nil
}

// deletePodOf deletes the pod name of rs. NotFound is returned as is.
func (c *Controller) deletePodOf(ctx context.Context, rs *appsv1.ReplicaSet, name string) error {
	err := c.client.CoreV1().Pods(rs.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		c.recorder.Eventf(c.w.object(rs), corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %w", err)
	}
	c.recorder.Eventf(c.w.object(rs), corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %v", name)
	return nil
}

// relatedPods returns the pods of every ReplicaSet that has the same
// controller as rs (the ReplicaSets of one Deployment), or rs's own when it
// has none.
func (c *Controller) relatedPods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	siblings := []*appsv1.ReplicaSet{rs}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if objs, err := c.rsIndexer.ByIndex(controllerUIDIndex, string(ref.UID)); err == nil {
			siblings = siblings[:0]
			for _, o := range objs {
				if s, ok := c.w.toRS(o); ok {
					siblings = append(siblings, s)
				}
			}
		}
	}
	seen := map[types.UID]bool{}
	var out []*corev1.Pod
	for _, s := range siblings {
		sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
		if err != nil {
			continue
		}
		pods, err := c.podLister.Pods(s.Namespace).List(sel)
		if err != nil {
			continue
		}
		for _, p := range pods {
			if !seen[p.UID] {
				seen[p.UID] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func isControlledBy(p *corev1.Pod, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(p)
	return ref != nil && ref.UID == uid
}
